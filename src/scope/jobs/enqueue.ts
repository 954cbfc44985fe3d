/**
 * enqueue: insert new jobs, or answer with the existing job for a duplicate id
 * or dedupe key (invariant 1), according to the key's mode (job/key-mode.ts).
 * A batch is one transaction: all or nothing — a key live under another mode
 * refuses the whole batch.
 *
 * @module
 */
import { baseMode, replacesPayload, type KeyMode } from "../../job/key-mode";
import type { Scope } from "../../job/schemas";
import { jobRows, oneJobRow, type JobRow } from "./job-row";
import { getJob, hasJournal, liveJobsOfKey } from "./read";
import type { HomeStore } from "./home-store";
import { buried } from "./tombstones";
import { jsonChunks } from "./json-chunks";
import { tallyCreated } from "./tallies";
import { pendingOfType } from "./counts";
import { seqLocalId } from "../../job/home";
import { newLeaseToken } from "./home-store";
import { PUSH_WORKER } from "./pushed-leases";
import { Room } from "./straight-room";
import { cancelsForNewest, supersedeForNewest } from "./key-cancel";

/** A validated job on its way into its home; the coordinator has already composed the id. */
export interface NewJob {
  id: string;
  type: string;
  /** JSON text, already size-checked. */
  payload: string;
  scope: Scope | null;
  dedupeKey: string | null;
  /** With a dedupeKey: how the key behaves (default active). */
  keyMode?: KeyMode | null;
  debounceMs?: number | null;
  throttleMs?: number | null;
  priority: number;
  /** Absolute due time; when null, now + delayMs. */
  runAt: number | null;
  delayMs: number;
  /** null: the type's configured maxAttempts. */
  maxAttempts: number | null;
  /** null: the type's configured timeoutMs, if any. */
  timeoutMs: number | null;
  tags: string[];
  /** JSON {kind, baseMs, maxMs}: the job's own backoff; null or absent: its type's. */
  backoff?: string | null;
  /** The schedule slot it fires for. */
  scheduledFor?: number | null;
  /**
   * false: the queue made the id up (no `id` given) — no caller can send it again, so deleting the job leaves no
   * tombstone (tombstones.ts). Absent (an older coordinator): the caller's, as before.
   */
  ownId?: boolean;
  /**
   * true: the coordinator made the id up for this job alone (no `id` given, none derived from another's): the home
   * may make one from the seq instead (EnqueueOptions.seqIds). An id derived from a made-up one (an event's delivery)
   * is named again later, so it keeps its form. Absent (an older coordinator): kept.
   */
  idFromQueue?: boolean;
  /** When it expires if not started by then (docs/guards.md "Expiry before start"); null / absent: its type's expireAfterMs after its run time, if set. */
  expiresAt?: number | null;
  /** The key value its type's keyed limits count it under (job/limit-key.ts), or null / absent. */
  limitKey?: string | null;
  /** JSON {url, on}: where its end is POSTed (callbacks.ts); null / absent: nowhere. */
  callback?: string | null;
  /** JSON {traceparent, tracestate?}: the trace context its spans continue (job/trace.ts); null / absent: none. */
  trace?: string | null;
  /** A child (ctx.invoke: scope/workflow/invokes.ts): its parent's id, and the invoke's name and position in its parent's journal. */
  parentId?: string;
  parentStep?: string;
  parentSeq?: number;
}

/** One job's answer: the job created or found, or — its id only a tombstone now (tombstones.ts) — nothing. */
export type Enqueued = { row: JobRow; created: boolean } | { row: null; created: false };

export type EnqueueRefusal = { ok: false; code: "conflict" | "queue_full"; index: number; message: string };
/** `superseded`: the older jobs of keys a cancelRunning or cancelPending enqueue ended (key-cancel.ts). */
export type EnqueueOutcome = { ok: true; results: Enqueued[]; superseded?: JobRow[] } | EnqueueRefusal;

/**
 * jobInsertManyIfNew: jobs in one statement (one call into SQLite, not one per job) — a batch's
 * keyless ones, or one keyed job. ?1 is a JSON array of rows `[id, payload, shape, dedupe_key, dedupe_mode,
 * scheduled_for, seq, id_seq, limit_key, parent_id, parent_step, parent_seq, lease_token]` (a job that goes straight
 * to a handler call — its shape's `lease_ms` set — is inserted `running` under that lease, held in memory like any
 * pushed lease: docs/design.md "Straight to a handler"; a child's parent is written with it,
 * not by a second statement), ?3 one of the batch's shapes — the columns its jobs mostly share (`jobShape`) — each read out
 * of its JSON once (the MATERIALIZED CTE), where reading every column out of each row's JSON was half the
 * statement's time (docs/design.md "What a job costs"); ?2 now. The CTE is joined through SQLite's automatic
 * index on `k`. ORDER BY v.key keeps the batch's order, so seq follows it. The unique indexes on id (job_id_idx)
 * and on a key's pending job (job_dedupe_pending_idx) decide: a conflicting row is skipped (not returned), and
 * the caller reads the job that holds it. (`jsonb_each(jsonb(?1))` made a 1,000-row insert ~20% faster in the
 * test runtime, but the SQLite of wrangler 4.86's workerd has no jsonb_each.)
 */
const JOB_INSERT_MANY_IF_NEW = `
INSERT INTO job (id, type, payload, scope_type, scope_id, state, priority, run_at, attempts, max_attempts,
                 timeout_ms, dedupe_key, dedupe_mode, tags, scheduled_for, created_at, updated_at, backoff, own_id, ordered, tally,
                 seq, id_seq, limit_key, parent_id, parent_step, parent_seq, expires_at, callback, trace,
                 lease_token, lease_owner, lease_ms, lease_kept, lease_expires_at, started_at)
WITH s AS MATERIALIZED (
  SELECT key AS k, value ->> 0 AS type, value ->> 1 AS scope_type, value ->> 2 AS scope_id, value ->> 3 AS priority, value ->> 4 AS run_at,
         value ->> 5 AS max_attempts, value ->> 6 AS timeout_ms, value ->> 7 AS tags, value ->> 8 AS backoff, value ->> 9 AS own_id,
         value ->> 10 AS ordered, value ->> 11 AS expires_at, value ->> 12 AS callback, value ->> 13 AS trace,
         value ->> 14 AS lease_ms
    FROM json_each(?3))
SELECT v.value ->> 0, s.type, v.value ->> 1, s.scope_type, s.scope_id, CASE WHEN s.lease_ms IS NULL THEN 'pending' ELSE 'running' END,
       s.priority, s.run_at, s.lease_ms IS NOT NULL, s.max_attempts,
       s.timeout_ms, v.value ->> 3, v.value ->> 4, s.tags, v.value ->> 5, ?2, ?2, s.backoff, s.own_id, s.ordered, 1,
       v.value ->> 6, v.value ->> 7, v.value ->> 8, v.value ->> 9, v.value ->> 10, v.value ->> 11, s.expires_at, s.callback, s.trace,
       v.value ->> 12, CASE WHEN s.lease_ms IS NOT NULL THEN '${PUSH_WORKER}' END, s.lease_ms, s.lease_ms IS NULL,
       CASE WHEN s.lease_ms IS NOT NULL THEN CASE WHEN s.timeout_ms IS NULL THEN ?2 + s.lease_ms ELSE min(?2 + s.lease_ms, ?2 + s.timeout_ms) END END,
       CASE WHEN s.lease_ms IS NOT NULL THEN ?2 END
  FROM json_each(?1) AS v JOIN s ON s.k = v.value ->> 2 WHERE true ORDER BY v.key
ON CONFLICT DO NOTHING
RETURNING *`;

/** jobLastSeq: the table's last seq (the rowid b-tree's last entry), 0 when empty. */
const JOB_LAST_SEQ = "SELECT coalesce(max(seq), 0) AS seq FROM job";

/** jobLatestStartOfKey: job_key_started_idx — the key's most recent start, whatever its state now. */
const JOB_LATEST_START_OF_KEY = "SELECT * FROM job WHERE dedupe_key = ? AND dedupe_key IS NOT NULL AND started_at >= ? ORDER BY started_at DESC LIMIT 1";
/**
 * jobReplacePendingPayload: coalesce / debounce; pending only (a running job's payload never changes). A debounce
 * re-times the job, and its expiry moves with its run time (docs/guards.md "Expiry before start").
 */
const JOB_REPLACE_PENDING = `
UPDATE job SET payload = ?1, run_at = coalesce(?2, run_at), expires_at = expires_at + coalesce(?2 - run_at, 0), updated_at = ?3
 WHERE seq = ?4 AND state = 'pending' RETURNING *`;

/** Refused: thrown out of the transaction (rolling the whole enqueue back) when item `index` cannot be enqueued — a key under another mode, or a type past its maxDepth. */
class Refused extends Error {
  constructor(
    readonly code: EnqueueRefusal["code"],
    readonly index: number,
    message: string,
  ) {
    super(message);
  }

  refusal(): EnqueueRefusal {
    return { ok: false, code: this.code, index: this.index, message: this.message };
  }
}

/**
 * How an enqueue treats its jobs.
 *
 * - `decided`: the jobs of a batch already decided to commit (batch-stage.ts), checked when staged. What changed
 *   since cannot refuse them any more: a key taken meanwhile under another mode answers with the job that holds
 *   it (as a duplicate does), and a depth cap is not checked again.
 * - `seqIds`: a job whose id the queue made up for it alone (`idFromQueue`) gets one made from its seq here instead
 *   (job/home.ts, seqLocalId), which needs no id index entry. Only for an enqueue whose caller learns the ids from
 *   this answer: a batch over several objects names its jobs by the coordinator's ids until they commit.
 */
export interface EnqueueOptions {
  decided?: boolean;
  seqIds?: boolean;
  /**
   * `straight`: a new job due now may go straight to `running`, leased to a handler call the push capability starts
   * once the write commits (docs/design.md "Straight to a handler") — as many as the hooks' `startable` allows. Only
   * for an enqueue whose record goes through the commit path as `enqueuedChanges` (job-writes.ts), whose created rows
   * the push capability starts: jobWrites.enqueue, a decided batch part, owed children.
   */
  straight?: boolean;
}

export function enqueueJobs(store: HomeStore, jobs: readonly NewJob[], now: number, options: EnqueueOptions = {}): EnqueueOutcome {
  try {
    const superseded: JobRow[] = [];
    const results = store.atomic(() => enqueueAll(store, jobs, now, options, superseded));
    return superseded.length > 0 ? { ok: true, results, superseded } : { ok: true, results };
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    return e.refusal();
  }
}

const DRY_RUN = Symbol("dry run");

/**
 * checkEnqueue: would `enqueueJobs` refuse these jobs? The same code runs in a
 * transaction that is then rolled back (and tells no one), so the answer can
 * never disagree with the real enqueue — as of now. A batch spread over
 * several objects checks each part with it before staging it (batch-stage.ts).
 */
export function checkEnqueue(store: HomeStore, jobs: readonly NewJob[], now: number): EnqueueRefusal | null {
  const quiet: HomeStore = { ...store, touched: () => {} };
  try {
    store.atomic(() => {
      enqueueAll(quiet, jobs, now);
      throw DRY_RUN;
    });
  } catch (e) {
    if (e === DRY_RUN) return null;
    if (!(e instanceof Refused)) throw e;
    return e.refusal();
  }
  return null;
}

function enqueueAll(store: HomeStore, jobs: readonly NewJob[], now: number, { decided = false, seqIds = false, straight = false }: EnqueueOptions = {}, superseded: JobRow[] = []): Enqueued[] {
  const made: JobRow[] = [];
  const room = straight ? new Room(store, now) : null;
  const out: Enqueued[] = [];
  const created = new Map<string, number>();
  let changed = false;
  // Keyless jobs wait in `plain` and are inserted together, before the next keyed job (which may read the key's
  // jobs) and at the end: the batch's order is kept.
  let plain: { job: NewJob; at: number }[] = [];
  const flush = () => {
    if (plain.length === 0) return;
    // An id a deleted job held is still taken: answered, not created. Only a caller's own id can have a tombstone.
    const gone = buried(store, plain.filter((p) => p.job.ownId !== false).map((p) => p.job.id), now);
    for (const { job, at } of plain) if (gone.has(job.id)) out[at] = { row: null, created: false };
    plain = plain.filter((p) => !gone.has(p.job.id));
    const inserted = insertMany(store, plain.map((p) => p.job), now, made, seqIds, room);
    for (const [k, { job, at }] of plain.entries()) {
      // A second job of the same id in the batch was skipped by the id's unique index: it gets the first, not created.
      const row = inserted[k];
      if (row) {
        out[at] = { row, created: true };
        created.set(job.type, (created.get(job.type) ?? 0) + 1);
        changed = true;
      } else out[at] = { row: getJob(store.sql, job.id) ?? fail(`enqueue of ${job.id} conflicted with no job`), created: false };
    }
    plain = [];
  };
  jobs.forEach((job, index) => {
    if (job.dedupeKey === null) {
      plain.push({ job, at: out.length });
      out.push(undefined as unknown as Enqueued); // filled by flush
      return;
    }
    flush();
    const existing = getJob(store.sql, job.id);
    if (existing) {
      out.push({ row: existing, created: false });
      return;
    }
    if (buried(store, [job.id], now).size > 0) {
      out.push({ row: null, created: false });
      return;
    }
    const answer = answerFromKey(store, job, index, now, decided, superseded);
    if (answer) {
      out.push({ row: answer.row, created: false });
      changed ||= answer.changed;
      return;
    }
    // A keyed job goes straight to a handler only when its key holds no live job: a follower waits its turn.
    const keyFree = room !== null && liveJobsOfKey(store.sql, job.dedupeKey).length === 0;
    const row = insertMany(store, [job], now, made, seqIds, keyFree ? room : null)[0] ?? fail(`enqueue of ${job.id} conflicted with no job`);
    out.push({ row, created: true });
    created.set(job.type, (created.get(job.type) ?? 0) + 1);
    changed = true;
  });
  flush();
  // Counted once per type for the whole enqueue (a keyed batch inserts its jobs one statement each).
  tallyCreated(store, made, now);
  // Depth caps, once every job of the batch is in: past a cap, the whole enqueue is rolled back.
  for (const type of decided ? [] : created.keys()) {
    const cap = store.config.typeSettings(type).maxDepth;
    if (cap === null) continue;
    const depth = pendingOfType(store.sql, type);
    if (depth > cap) {
      const index = jobs.findIndex((j) => j.type === type);
      throw new Refused("queue_full", index, `${type} holds ${depth - created.get(type)!} pending jobs here and maxDepth is ${cap}: ${created.get(type)} more would pass it`);
    }
  }
  if (changed) store.touched(now);
  return out;
}

/** answerFromKey: the job a duplicate gets (and whether coalescing changed it), or null when a new job must be created. */
function answerFromKey(store: HomeStore, job: NewJob, index: number, now: number, decided: boolean, superseded: JobRow[]): { row: JobRow; changed: boolean } | null {
  const mode = job.keyMode ?? "active";
  const live = liveJobsOfKey(store.sql, job.dedupeKey!);
  // The mode must match; coalescing is the call's own choice (job/key-mode.ts).
  const other = live.find((r) => baseMode((r.dedupe_mode ?? "active") as KeyMode) !== baseMode(mode));
  if (other && decided) return { row: other, changed: false };
  if (other) {
    throw new Refused("conflict", index, `dedupe key ${JSON.stringify(job.dedupeKey)} is live under mode ${baseMode((other.dedupe_mode ?? "active") as KeyMode)} (job ${other.id}); this enqueue asks for mode ${baseMode(mode)}`);
  }
  // A journaled job back to pending (a sleep, a retry) is resuming: for its key it is as if it ran — a duplicate
  // never replaces its payload or joins it; it gets it (active) or waits behind it as a follower (pending mode),
  // as behind a running one (docs/guarantees.md "Keys and journals"). Only a job that has run can have a journal.
  const resuming = live.find((r) => r.state === "pending" && r.started_at !== null && hasJournal(store.sql, r.seq));
  const pending = live.find((r) => r.state === "pending" && r !== resuming);
  // A waiting job has run and has a journal: for its key it is running (docs/workflows.md).
  const running = live.find((r) => r.state === "running" || r.state === "waiting") ?? resuming;
  if (cancelsForNewest(mode)) {
    // The newest wins: the older jobs the mode ends are superseded, and the new job is created (key-cancel.ts).
    superseded.push(...supersedeForNewest(store, mode, live, (r) => r === running || r.state !== "pending", now));
    return null;
  }
  const same = (row: JobRow | undefined) => (row ? { row, changed: false } : null);
  if (mode === "throttle") {
    return same(jobRows(store.sql.exec(JOB_LATEST_START_OF_KEY, job.dedupeKey, now - (job.throttleMs ?? 0)))[0] ?? pending);
  }
  if (pending) {
    if (!replacesPayload(mode)) return same(pending);
    // A key spans the types of a scope (API.md), but a payload is only ever replaced by one of its own type.
    if (pending.type !== job.type) {
      if (decided) return same(pending);
      throw new Refused("conflict", index, `dedupe key ${JSON.stringify(job.dedupeKey)} is held by pending job ${pending.id} of type ${pending.type}; mode ${mode} would replace its payload with one for ${job.type}`);
    }
    const runAt = mode === "debounce" ? now + (job.debounceMs ?? 0) : null;
    return { row: oneJobRow(store.sql.exec(JOB_REPLACE_PENDING, store.lens.seal(job.payload), runAt, now, pending.seq)), changed: true };
  }
  // A running job only: active mode answers with it; the other modes queue one follower behind it.
  if (running && (mode === "active" || mode === "active+latest")) return same(running);
  return null;
}

/**
 * insertMany: insert jobs, one statement per part under 2 MB (json-chunks.ts); returns each job's row, or undefined
 * where a unique index refused it, and adds the rows to `made`: the enqueue counts them once per type at its end
 * (tallies.ts; the insert sets `tally` 1, which the count trigger skips). Each row's seq is given (the next after
 * the table's last), so a job's id can be made from it (`seqIds`: EnqueueOptions).
 */
function insertMany(store: HomeStore, jobs: readonly NewJob[], now: number, made: JobRow[], seqIds: boolean, room: Room | null): (JobRow | undefined)[] {
  const out: (JobRow | undefined)[] = [];
  for (const part of jsonChunks(jobs, (job) => store.lens.storedLength(job.payload.length) + job.id.length + 200)) {
    const last = store.sql.exec<{ seq: number }>(JOB_LAST_SEQ).one().seq;
    const shapes = new Map<string, number>();
    const rows = part.map((job, k) => {
      const shape = jobShape(store, job, now);
      const starts = room?.take(job, shape) ?? false;
      if (starts) shape.push(store.config.typeSettings(job.type).leaseMs);
      const key = JSON.stringify(shape);
      let s = shapes.get(key);
      if (s === undefined) shapes.set(key, (s = shapes.size));
      const seq = last + 1 + k;
      const fromSeq = seqIds && job.idFromQueue === true;
      const id = fromSeq ? `${job.id.slice(0, job.id.indexOf(".") + 1)}${seqLocalId(now, seq)}` : job.id;
      // Sealed here, in the insert every enqueue path takes (sealing/vault.ts: unchanged without keys, or sealed already).
      const row: unknown[] = [id, store.lens.seal(job.payload), s, job.dedupeKey, job.dedupeKey === null ? null : (job.keyMode ?? "active"), job.scheduledFor ?? null, seq, fromSeq ? 1 : 0, job.limitKey ?? null];
      if (job.parentId !== undefined || starts) row.push(job.parentId ?? null, job.parentStep ?? null, job.parentSeq ?? null);
      if (starts) row.push(newLeaseToken());
      return row;
    });
    const inserted = jobRows(store.sql.exec(JOB_INSERT_MANY_IF_NEW, JSON.stringify(rows), now, `[${[...shapes.keys()].join(",")}]`));
    made.push(...inserted);
    for (const r of inserted) if (r.expires_at !== null && r.state === "pending") store.expiries.noted(r.expires_at);
    const bySeq = new Map(inserted.map((r) => [r.seq, r]));
    for (const row of rows) out.push(bySeq.get(row[6] as number));
  }
  return out;
}

/**
 * jobShape: the columns of a job that a batch's jobs mostly share — in JOB_INSERT_MANY_IF_NEW's shape order —, the
 * type's settings filling what the enqueue left out.
 */
function jobShape(store: HomeStore, job: NewJob, now: number): unknown[] {
  const settings = store.config.typeSettings(job.type);
  const runAt = job.keyMode === "debounce" ? now + (job.debounceMs ?? 0) : (job.runAt ?? now + job.delayMs);
  return [
    job.type,
    job.scope?.type ?? null,
    job.scope?.id ?? null,
    job.priority,
    runAt,
    job.maxAttempts ?? settings.maxAttempts,
    job.timeoutMs ?? settings.timeoutMs,
    JSON.stringify(job.tags),
    job.backoff ?? null,
    job.ownId === false ? 0 : 1,
    settings.ordered ? 1 : 0,
    // Its own expiry, or its type's counted from when it is due (docs/guards.md "Expiry before start").
    job.expiresAt ?? (settings.expireAfterMs === null ? null : runAt + settings.expireAfterMs),
    job.callback ?? null,
    job.trace ?? null,
  ];
}

function fail(message: string): never {
  throw new Error(message);
}
