/**
 * The tables of one ScopeDO. drizzle-kit generates `migrations/scope/` from
 * this file; the hot-path statements in `src/scope/` are written against these
 * names and say which index they use.
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

/**
 * One row per type (a table WITHOUT ROWID, so a change writes one row and no index entry): its live counts per
 * state (failed per kind), so stats and summaries cost O(types), not O(jobs); and the counters of its latest
 * minute (`minute`, `m_*`), moved to metric_minute when a later minute begins. A job's transition writes this
 * one row — counts and counter together — by trigger or, for the statements that move many jobs, once per type
 * (scope/jobs/tallies.ts; migration `type_count`). It replaced `job_count` (a row per state: two rows per move) and
 * a metric_minute upsert per move (docs/design.md "What a job costs").
 */
export const typeCount = sqliteTable("type_count", {
  type: text("type").primaryKey(),
  pending: integer("pending").notNull().default(0),
  running: integer("running").notNull().default(0),
  waiting: integer("waiting").notNull().default(0),
  completed: integer("completed").notNull().default(0),
  cancelled: integer("cancelled").notNull().default(0),
  superseded: integer("superseded").notNull().default(0),
  expired: integer("expired").notNull().default(0),
  failedRetriesExhausted: integer("failed_retries_exhausted").notNull().default(0),
  failedFatal: integer("failed_fatal").notNull().default(0),
  failedStalled: integer("failed_stalled").notNull().default(0),
  failedTimeout: integer("failed_timeout").notNull().default(0),
  failedNondeterminism: integer("failed_nondeterminism").notNull().default(0),
  /** Epoch ms of the minute the m_* counters count. */
  minute: integer("minute").notNull().default(0),
  mEnqueued: integer("m_enqueued").notNull().default(0),
  mStarted: integer("m_started").notNull().default(0),
  mCompleted: integer("m_completed").notNull().default(0),
  mFailed: integer("m_failed").notNull().default(0),
  mRetried: integer("m_retried").notNull().default(0),
  mCancelled: integer("m_cancelled").notNull().default(0),
});

/**
 * The steps of a job's history its row can no longer tell, written by
 * triggers on `job` (migration `job_history_triggers`) in the statement that
 * changes the job: an attempt that ended back in pending, and, when a finished
 * job is retried by hand, the end it undoes. Creation, the current attempt's
 * start and the final state are read from the job row itself (scope/jobs/timeline.ts), so
 * a job that succeeds first time writes none. Deleted with the job.
 */
export const jobTransition = sqliteTable(
  "job_transition",
  {
    /** The step's place in its job's timeline, from 1 (migration `transition_without_rowid`: per job, not per table). */
    id: integer("id").notNull(),
    jobSeq: integer("job_seq").notNull(),
    at: integer("at").notNull(),
    state: text("state").notNull(),
    /** The job's attempt count after the step. */
    attempt: integer("attempt").notNull(),
    /** failed: kind and error; cancelled: the reason; pending after an attempt: its error; "manual retry". */
    note: text("note"),
    /** When the attempt that this step ended had started (null when it ended no attempt). */
    startedAt: integer("started_at"),
    /** The version of the code that ran the attempt this step ended (job.code_version when it ended), or null. */
    version: text("version"),
  },
  // WITHOUT ROWID, keyed by (job, place) alone: a timeline step writes one row, where it wrote its row and its
  // job_transition_job_idx entry (migration `transition_without_rowid`).
  (t) => [primaryKey({ columns: [t.jobSeq, t.id] })],
);

/**
 * Per-minute counters per job type, kept by the same triggers (and, for
 * `enqueued`, by enqueue once per type per batch). Sent to the
 * catalog with each summary (the minutes since the last one) and kept here two
 * hours (METRIC_KEEP_MS); the catalog holds the queue-wide series.
 */
export const metricMinute = sqliteTable(
  "metric_minute",
  {
    /** Epoch ms of the minute's start. */
    minute: integer("minute").notNull(),
    type: text("type").notNull(),
    enqueued: integer("enqueued").notNull().default(0),
    started: integer("started").notNull().default(0),
    completed: integer("completed").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    /** Back to pending after an attempt or a manual retry. */
    retried: integer("retried").notNull().default(0),
    cancelled: integer("cancelled").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.minute, t.type] })],
);

/**
 * Error groups (scope/errors/error-groups.ts; docs/operating.md "Error groups"): the attempts that ended in an error
 * here, by type and fingerprint (job/error-group.ts) — one row per group, written once per failed attempt (WITHOUT
 * ROWID, so no key index entry beside it). `buckets` counts them per five minutes over the last day (JSON
 * `{"<bucket start>": n}`), `recent` the newest jobs' ids (a group's retry or rerun acts on them).
 */
export const errorGroup = sqliteTable(
  "error_group",
  {
    type: text("type").notNull(),
    fingerprint: text("fingerprint").notNull(),
    kind: text("kind", { enum: ["error", "fatal", "timeout", "stalled", "nondeterminism"] }).notNull(),
    /** The message's first line, masked (what the group's jobs share). */
    message: text("message").notNull(),
    /** The first frame of the stack, when the handler's runtime sent one. */
    frame: text("frame"),
    /** The first error as it was, cut to 500 characters. */
    sample: text("sample").notNull(),
    firstAt: integer("first_at").notNull(),
    firstJob: text("first_job").notNull(),
    lastAt: integer("last_at").notNull(),
    lastJob: text("last_job").notNull(),
    total: integer("total").notNull(),
    buckets: text("buckets").notNull(),
    recent: text("recent").notNull(),
  },
  (t) => [primaryKey({ columns: [t.type, t.fingerprint] })],
);

/** Small facts about this object: its home name, whether the catalog is behind, the last alarm error. */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * A job's journal of durable steps (scope/workflow/steps.ts; docs/handlers.md "Durable steps"):
 * one row per `ctx.step` / `ctx.sleep` position, in call order. A step's row
 * is written when it finishes (its JSON result), or when it starts if it is
 * `atMostOnce` (then `finished_at` is null until it finishes). Position -1 is
 * the start record (`started_at`: the first attempt's start, `result`: a seed),
 * from which `ctx.now()` and `ctx.uuid()` are derived. Deleted with the job
 * (trigger, migration `job_step_triggers`).
 */
export const jobStep = sqliteTable(
  "job_step",
  {
    jobSeq: integer("job_seq").notNull(),
    /** Position in the job's step calls, from 0; -1 is the start record. */
    seq: integer("seq").notNull(),
    name: text("name").notNull(),
    /** `signal` / `token`: a wait (scope/workflow/waits.ts); its result is null until it ends: `{"data": …}`, or `null` on its timeout. */
    kind: text("kind", { enum: ["start", "step", "sleep", "signal", "token", "token_wait", "invoke", "event", "patch"] }).notNull(),
    /** JSON text; null while an atMostOnce step has started and not finished. */
    result: text("result"),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
    /** The attempt that wrote the row (1 for the first). */
    attempt: integer("attempt").notNull(),
    /** sleep: when the job is due again; a wait: its timeout (null: none). */
    wakeAt: integer("wake_at"),
    /** UTF-8 bytes of name and result, for the journal's cap. */
    bytes: integer("bytes").notNull(),
    /** invoke: the child job's id (scope/workflow/invokes.ts), so a cancel reaches it while it runs. Null otherwise. */
    ref: text("ref"),
  },
  (t) => [primaryKey({ columns: [t.jobSeq, t.seq] })],
);

/**
 * A topic's event waits (scope/workflow/event-waits.ts; docs/workflows.md "Waiting for an event"), kept in the topic's own
 * registry object (`scope:edgequeue.topic:<topic>`): each job's open ctx.waitForEvent, by the field names its
 * `match` names and their values (canonical JSON), so an event finds its waiters with one seek per field set.
 */
export const eventWaiter = sqliteTable(
  "event_waiter",
  {
    jobId: text("job_id").notNull(),
    /** The wait's position in the job's journal. */
    seq: integer("seq").notNull(),
    /** The match's field names, sorted, as a JSON array. */
    fields: text("fields").notNull(),
    /** The match's values in the order of `fields`, as a JSON array. */
    match: text("match").notNull(),
    /** When the job's object heard of the wait: events before it do not end it. */
    since: integer("since").notNull(),
    /** The wait's timeout (epoch ms), or null: after it, the row is swept. */
    until: integer("until"),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] }), index("event_waiter_match_idx").on(t.fields, t.match), index("event_waiter_until_idx").on(t.until)],
);

/**
 * A topic's recent events, in its registry object, for waits that register after the event was emitted but began
 * before it (the registration is owed by the job's object and may arrive late): kept `events.keepMs`.
 */
export const topicEvent = sqliteTable(
  "topic_event",
  {
    eventId: text("event_id").primaryKey(),
    payload: text("payload").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("topic_event_at_idx").on(t.at)],
);

/**
 * What this object owes other objects, written in the transaction that owes it and sent after the commit
 * (scope/workflow/outbox.ts; docs/design.md "The outbox"): children to enqueue, a child's end for its parent, a cancel for a
 * child, a failure handler to enqueue. A row is deleted once its receiver answered; until then the alarm sends it
 * again, backing off. Receivers apply each idempotently (by job id, or by the journal entry it ends).
 */
export const outbox = sqliteTable(
  "outbox",
  {
    seq: integer("seq").primaryKey(),
    /** scope/workflow/outbox.ts OwedKind: what it is, and whether `target` names an object or a job in one. */
    kind: text("kind", { enum: ["enqueue", "child_ended", "cancel", "event_wait", "event_unwait", "event_arrived"] }).notNull(),
    target: text("target").notNull(),
    /** JSON text. */
    body: text("body").notNull(),
    tries: integer("tries").notNull().default(0),
    /** When the alarm sends it (again); the send right after the commit goes first. */
    nextAt: integer("next_at").notNull(),
  },
  (t) => [index("outbox_next_idx").on(t.nextAt)],
);

/**
 * Signals and wait-token completions that reached a job before it waited for them (scope/workflow/waits.ts; docs/workflows.md):
 * kept `signals.retainMs` for the job's next wait of that kind and name, oldest first, then dropped by the sweep.
 * Deleted with the job (trigger, migration `waiting_state`).
 */
export const jobSignal = sqliteTable(
  "job_signal",
  {
    jobSeq: integer("job_seq").notNull(),
    /** `signal`, or `token` (a wait token's completion). */
    kind: text("kind", { enum: ["signal", "token"] }).notNull(),
    name: text("name").notNull(),
    /** Arrival order among the job's kept signals of this kind and name. */
    n: integer("n").notNull(),
    /** JSON text of the signal's `data`. */
    data: text("data").notNull(),
    sentAt: integer("sent_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobSeq, t.kind, t.name, t.n] }), index("job_signal_expires_idx").on(t.expiresAt)],
);

/**
 * The pool permits a pulled attempt holds (scope/pull/pull-permits.ts; README
 * "Pull workers"): taken when the claim leased it, renewed by its heartbeats,
 * returned once no running attempt of that lease holds them — complete, fail,
 * release, sleep, cancel or the reap pass. One row per (pool, permit).
 */
export const jobPermit = sqliteTable(
  "job_permit",
  {
    pool: text("pool").notNull(),
    permitId: text("permit_id").notNull(),
    jobSeq: integer("job_seq").notNull(),
    /** The lease the permit went with: a later attempt of the same job holds its own. */
    leaseToken: text("lease_token").notNull(),
    /**
     * Cancelled while running: the worker learns it at its next heartbeat, so the permit is kept
     * until the lease it had would have ended (then returned by the alarm). Null otherwise.
     */
    holdUntil: integer("hold_until"),
  },
  (t) => [primaryKey({ columns: [t.pool, t.permitId] }), index("job_permit_job_idx").on(t.jobSeq)],
);

/**
 * What retention leaves of a deleted job: its id, until `expires_at`
 * (`retention.idempotencyMs` after the delete), so an enqueue with the same
 * id still answers "already done" (`{created: false, job: null}`) and creates
 * nothing (scope/jobs/tombstones.ts; docs/guarantees.md "Guarantees and limits").
 */
export const jobTombstone = sqliteTable(
  "job_tombstone",
  {
    id: text("id").primaryKey(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("job_tombstone_expires_idx").on(t.expiresAt)],
);

/**
 * The job types paused queue-wide, as this object last heard from its catalog
 * shard (scope/jobs/pause-gate.ts): none of their jobs is dispatched or claimed
 * here. The version and the promise's end are kept in `meta`.
 */
export const typePause = sqliteTable("type_pause", { type: text("type").primaryKey() });

/**
 * `ctx.log` lines kept with the job (scope/jobs/job-logs.ts; README "Logs kept with
 * the job"): the newest 100 per job, each at most 2 KiB. Deleted with the job
 * (trigger, migration `job_log_triggers`).
 */
/**
 * Completion callbacks owed (scope/watching/callbacks.ts; docs/http-api.md "Completion callbacks"): written by the
 * job_callback trigger in the transaction that ended the job, deleted once the URL answered 2xx, kept with
 * `dead_at` after the last try (listed by GET /v1/callbacks/dead) until the job is deleted. No index: the table
 * holds only what is owed and what died, and rows read cost a thousandth of rows written.
 */
export const callbackOut = sqliteTable("callback_out", {
  seq: integer("seq").primaryKey(),
  jobSeq: integer("job_seq").notNull(),
  /** The state the job ended in (the trigger's). */
  state: text("state").notNull(),
  /** When the job ended so (its finished_at then): with the job's id, the delivery's id, the same on every try. */
  endedAt: integer("ended_at").notNull(),
  /** When it is sent (again). */
  nextAt: integer("next_at").notNull(),
  tries: integer("tries").notNull().default(0),
  lastError: text("last_error"),
  /** When it was given up on; null while it is still owed. */
  deadAt: integer("dead_at"),
  /**
   * The ending's own fields (state, error, result, times…) as JSON, kept by the job_callback_undone trigger when a
   * manual retry undoes the ending before its callback was sent: the callback tells the ending it was owed for, not
   * the job's state since. Null while the job still ends as it did.
   */
  ending: text("ending"),
});

export const jobLog = sqliteTable(
  "job_log",
  {
    /** Write order within the job, from 1; the newest are the highest. */
    id: integer("id").notNull(),
    jobSeq: integer("job_seq").notNull(),
    at: integer("at").notNull(),
    attempt: integer("attempt").notNull(),
    message: text("message").notNull(),
    /** JSON object, or null. */
    fields: text("fields"),
  },
  // Keyed by (job, place) alone, WITHOUT ROWID (migration 0040): a line is one row written, where a rowid table
  // wrote its row and its job_log_job_idx entry.
  (t) => [primaryKey({ columns: [t.jobSeq, t.id] })],
);

/**
 * A batch enqueue spread over several objects, staged here until its decision
 * (scope/batches/batch-stage.ts; docs/http-api.md "The HTTP API"): the jobs are kept as they
 * would be enqueued, invisible to claims, dispatch, listings and stats, and
 * become jobs only when the batch commits.
 */
export const jobStage = sqliteTable(
  "job_stage",
  {
    batch: text("batch").notNull(),
    /** The job's place among this object's part of the batch. */
    idx: integer("idx").notNull(),
    /** The job as the enqueue would take it (scope/jobs/enqueue.ts NewJob), JSON. */
    job: text("job").notNull(),
    stagedAt: integer("staged_at").notNull(),
    /** The object that holds the batch's decision. */
    decider: text("decider").notNull(),
  },
  // WITHOUT ROWID, keyed by its primary key alone (migration `stage_without_rowid`): a staged part writes one row, where
  // it wrote its primary key's entry and a staged_at index entry (read by no query) too.
  (t) => [primaryKey({ columns: [t.batch, t.idx] })],
);

/** The decisions of the batches this object decides: commit or abort, whichever came first. */
export const batchDecision = sqliteTable(
  "batch_decision",
  {
    batch: text("batch").primaryKey(),
    decision: text("decision", { enum: ["commit", "abort"] }).notNull(),
    decidedAt: integer("decided_at").notNull(),
  },
  // WITHOUT ROWID (migration `stage_without_rowid`): a decision writes its row and its decided_at entry, not its key's too.
  (t) => [index("batch_decision_at_idx").on(t.decidedAt)],
);
