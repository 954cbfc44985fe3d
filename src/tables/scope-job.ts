/**
 * The `job` table of a ScopeDO: one row per job, its partial indexes and its CHECKs (src/tables/scope.ts gathers the
 * object's tables for drizzle-kit, which generates `migrations/scope/` from them).
 *
 * @module
 */
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { FAILURE_KINDS, JOB_STATES, LIVE_STATES, TERMINAL_STATES, sqlList } from "../job/states";

export const job = sqliteTable(
  "job",
  {
    /** Enqueue order within this object; the last tie-breaker of the claim order and the listing cursor. */
    seq: integer("seq").primaryKey(),
    id: text("id").notNull(),
    type: text("type").notNull(),
    /** JSON text. */
    payload: text("payload").notNull(),
    scopeType: text("scope_type"),
    scopeId: text("scope_id"),
    state: text("state", { enum: JOB_STATES }).notNull(),
    failureKind: text("failure_kind", { enum: FAILURE_KINDS }),
    priority: integer("priority").notNull(),
    runAt: integer("run_at").notNull(),
    attempts: integer("attempts").notNull(),
    maxAttempts: integer("max_attempts").notNull(),
    timeoutMs: integer("timeout_ms"),
    dedupeKey: text("dedupe_key"),
    /** How the dedupe key behaves over time: active, pending (+latest), debounce, throttle (job/key-mode.ts). */
    dedupeMode: text("dedupe_mode"),
    /** The schedule slot this job was fired for (epoch ms); null when not from a schedule. */
    scheduledFor: integer("scheduled_for"),
    /** The job's own backoff (JSON `{kind, baseMs, maxMs}`), or null for its type's (job/backoff.ts). */
    backoff: text("backoff"),
    /** JSON array of strings. */
    tags: text("tags").notNull(),
    lastError: text("last_error"),
    /** JSON text. */
    result: text("result"),
    cancelReason: text("cancel_reason"),
    leaseToken: text("lease_token"),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: integer("lease_expires_at"),
    leaseMs: integer("lease_ms"),
    /**
     * 0 for a pushed attempt of a type that is not one at a time: its lease is held in the object's memory
     * (scope/jobs/pushed-leases.ts) and has no job_lease_idx entry — one row written less per attempt (docs/design.md
     * "What a job costs"); 1 for every other lease.
     */
    leaseKept: integer("lease_kept").notNull().default(1),
    /**
     * 1 for a pushed job's retry held by its object's dispatcher (scope/jobs/held-retries.ts): pending, backing off,
     * with no job_claim_idx entry — the object's memory holds its time and restarts it straight to its handler, so
     * a retry writes the row, not the row and its index entry twice (docs/design.md "Held retries"). A new
     * instance gives every held row back to the index at its start; 0 for every other row.
     */
    held: integer("held").notNull().default(0),
    /**
     * The `ctx.log` lines of the attempt that completed it, kept in its own row (scope/jobs/job-logs.ts; docs/design.md
     * "Logs in the row"): JSON `[[at, attempt, message, fields], …]`, written by the completion's own update — no row
     * of its own to write or delete, where each line in job_log was two. Null when it kept none there; lines of
     * other attempts, and a completion's lines past ROW_LOGS_MAX, are in job_log.
     */
    logs: text("logs"),
    /**
     * Timeline entries kept in the row (scope/jobs/timeline.ts; docs/design.md "Held retries"): JSON `[[id, at, state,
     * attempt, note, startedAt], …]`, an attempt a held retry ended back in pending, written by that retry's own
     * update — where a job_transition row was two (its insert and its delete). Numbered with job_transition's rows
     * (`id`), at most HISTORY_ROW_MAX; null until the first.
     */
    history: text("history"),
    /**
     * Reruns (POST /v1/jobs/{id}/rerun; scope/workflow/rerun.ts; docs/workflows.md "Rerun from a step"): the job
     * this one reruns (`rerun_of`), and on that job the reruns made of it, oldest first (`reruns`, a JSON array of
     * ids). A rerun lives in its job's object, so both are written in one transaction. Null otherwise.
     */
    rerunOf: text("rerun_of"),
    reruns: text("reruns"),
    /**
     * The version of the code that ran the job's latest ended attempt, as its handler reported it (the Worker's
     * version metadata, else its configured `version`; docs/deploy.md "Code that changes under running jobs"), set
     * by the update that ends the attempt; null when none was reported (a stalled attempt, an older SDK). Earlier
     * attempts' versions are in their timeline entries.
     */
    codeVersion: text("code_version"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    startedAt: integer("started_at"),
    finishedAt: integer("finished_at"),
    /**
     * Bumped by the statements that count their own moves in job_count and metric_minute, one upsert per
     * type for all their rows (scope/jobs/tallies.ts): the count triggers skip a row whose `tally` changed.
     */
    tally: integer("tally").notNull().default(0),
    /** 1 when the id is the caller's own (given, or derived from one: an event's, a schedule slot's): only such an id can come back, so only it leaves a tombstone (scope/jobs/tombstones.ts). */
    ownId: integer("own_id").notNull().default(1),
    /**
     * 1 when this object made the id from the job's seq (`<ms>~<seq>`: job/home.ts, for an enqueue without `id`):
     * such an id is found by its seq, so it has no entry in job_id_idx — one row written less per job (docs/design.md
     * "What a job costs").
     */
    idSeq: integer("id_seq").notNull().default(0),
    /**
     * The value its type's keyed limits count it under (docs/guards.md "Keyed limits"), read from the job when it was
     * prepared (job/limit-key.ts); null for a type without one.
     */
    limitKey: text("limit_key"),
    /** 1 for a job of an ordered type (set at enqueue from the config; scope/jobs/ordered-repair.ts marks the rest when a type becomes ordered). */
    ordered: integer("ordered").notNull().default(1),
    /**
     * What a `waiting` job waits for, as the API shows it (JSON `[{kind, name, until}]`: scope/workflow/waits.ts); null in
     * every other state. Its `run_at` is the earliest timeout (or WAIT_FOREVER).
     */
    wait: text("wait"),
    /** A child job's parent (ctx.invoke; scope/workflow/invokes.ts): its id, and the step (name, position) it waits under. Null otherwise. */
    parentId: text("parent_id"),
    parentStep: text("parent_step"),
    parentSeq: integer("parent_seq"),
    /** A parent's invoke entries still open (scope/workflow/invokes.ts): its child ends count it down, and the last resumes it. */
    childrenOpen: integer("children_open").notNull().default(0),
    /**
     * When a job never started expires (docs/guards.md "Expiry before start"): set at enqueue from `expiresAt`,
     * `expiresInMs` or the type's `expireAfterMs`; null for a job that does not expire, and dropped by a manual retry.
     */
    expiresAt: integer("expires_at"),
    /**
     * The latest `ctx.progress` of the job (docs/handlers.md "Progress"): a number from 0 to 100 or a JSON object, as
     * JSON text, and when it was reported (the queue's clock); null until one is. Kept across attempts.
     */
    progress: text("progress"),
    progressAt: integer("progress_at"),
    /**
     * Where the job's end is POSTed (docs/http-api.md "Completion callbacks"): JSON `{url, on}` from the enqueue's
     * `callback`, or null. The job_callback trigger owes a callback_out row when it ends in a state of `on`.
     */
    callback: text("callback"),
    /**
     * The W3C trace context the enqueue carried (docs/operating.md "OpenTelemetry"): JSON `{traceparent,
     * tracestate?}`, or null. The job's spans continue it; its handler gets it as ctx.trace.
     */
    trace: text("trace"),
    /**
     * The job's journal kept in its own row (scope/workflow/journal-row.ts; docs/design.md "Durable steps"): JSON
     * `{at, seed, bytes, e}` — the start record, from which ctx.now() and ctx.uuid() derive, the bytes of its entries,
     * and its finished steps and sleeps as arrays. A step written here is one row (an update of this one, deleted
     * with it), where a job_step row was two (its insert and its delete). Null until the first journal write;
     * entries that change after they are written (waits, invokes, tokens, an atMostOnce step's start) and those past
     * the row's share (ROW_JOURNAL_MAX) stay in job_step.
     */
    journal: text("journal"),
    /**
     * 1 for a running job asked to pause (POST /v1/jobs/{id}/pause; scope/jobs/job-pause.ts): it pauses at its next
     * step, or where its attempt would go back to pending, and the ask becomes a `pause` entry of its `wait`. Null
     * otherwise: the statements that end or move a running job clear it.
     */
    pauseAsked: integer("pause_asked"),
  },
  (t) => [
    /** A job by its id, for the ids a caller gave (or the coordinator made up); an id made from the seq is found by its seq (scope/jobs/read.ts, byId). */
    uniqueIndex("job_id_idx").on(t.id).where(sql`id_seq = 0`),
    /**
     * Claim order within a type: priority desc, runAt, enqueue order. Pending rows only, not a retry its object holds
     * (`held`); the key rides along so a follower check needs no row read.
     */
    index("job_claim_idx")
      .on(t.type, sql`${t.priority} DESC`, t.runAt, t.seq, t.dedupeKey)
      .where(sql`state = 'pending' AND held = 0`),
    /** A keyed type's claim (scope/jobs/keyed-claim.ts): the key values with due jobs, in key order, then each key's best due jobs. */
    index("job_key_claim_idx")
      .on(t.type, t.limitKey, sql`${t.priority} DESC`, t.runAt, t.seq, t.dedupeKey)
      .where(sql`state = 'pending' AND limit_key IS NOT NULL`),
    /** Earliest lease expiry (alarm, reap pass) of the leases not held in memory (`lease_kept`: scope/jobs/pushed-leases.ts). */
    index("job_lease_idx").on(t.leaseExpiresAt).where(sql`state = 'running' AND lease_kept = 1`),
    /**
     * Retention sweep and prune: terminal rows by finish time — failed, cancelled and superseded ones. A completed job,
     * the common end, has no entry: its sweep walks the table in seq order (scope/retention/completed-sweep.ts).
     */
    index("job_finished_idx").on(t.state, t.finishedAt).where(sql`finished_at IS NOT NULL AND state <> 'completed'`),
    /**
     * A dedupe key is held by at most one live job (invariant 1); a pending follower may wait behind a running one,
     * or behind a pending one that has run with a journal (never superseded: docs/guarantees.md "Keys and journals"),
     * but there are never two pending jobs of a key that have not started.
     */
    uniqueIndex("job_dedupe_pending_idx").on(t.dedupeKey).where(sql`dedupe_key IS NOT NULL AND state = 'pending' AND started_at IS NULL`),
    /**
     * Every job of a key, whatever its state: its live ones, its running one, its latest start are read from the key's
     * rows (a key holds few; its finished ones until retention). One entry per keyed job, written once at insert —
     * partial indexes per state wrote one at each move (docs/design.md "What a job costs").
     */
    index("job_key_idx").on(t.dedupeKey).where(sql`dedupe_key IS NOT NULL`),
    /**
     * An ordered type's head: its oldest live job (scope/jobs/claim.ts, orderedHead). Only jobs of ordered types have an
     * entry (`ordered`): the others' inserts and completions write none.
     */
    index("job_ordered_live_idx")
      .on(t.type, t.seq)
      .where(sql.raw(`ordered = 1 AND state IN (${sqlList(LIVE_STATES)})`)),
    /** Waiting jobs by their earliest timeout (run_at): the alarm, and the pass that ends timed-out waits (scope/workflow/waits.ts). */
    index("job_wait_idx").on(t.runAt).where(sql`state = 'waiting'`),
    /**
     * Jobs that may expire, by expiry: the alarm and its expiry pass (scope/jobs/expiry.ts). Only a never-started pending job
     * with an expiry has an entry, so a job without one writes none, and a claim's start takes it out.
     */
    index("job_expiry_idx").on(t.expiresAt).where(sql`state = 'pending' AND started_at IS NULL AND expires_at IS NOT NULL`),
    check("job_state_check", sql.raw(`state IN (${sqlList(JOB_STATES)})`)),
    check(
      "job_failure_kind_check",
      sql.raw(`(state = 'failed') = (failure_kind IS NOT NULL) AND (failure_kind IS NULL OR failure_kind IN (${sqlList(FAILURE_KINDS)}))`),
    ),
    check("job_finished_check", sql.raw(`(state IN (${sqlList(TERMINAL_STATES)})) = (finished_at IS NOT NULL)`)),
    check(
      "job_lease_check",
      sql`(state = 'running') = (lease_token IS NOT NULL) AND (state = 'running') = (lease_expires_at IS NOT NULL)`,
    ),
    check("job_wait_check", sql`(state = 'waiting') = (wait IS NOT NULL)`),
  ],
);
