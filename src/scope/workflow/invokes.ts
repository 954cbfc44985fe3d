/**
 * Child jobs (docs/workflows.md "Child jobs"): `ctx.invoke(name, request)` journals an `invoke` entry at its
 * position, naming the child's id, and owes the child's enqueue to the child's home (outbox.ts) in the same
 * transaction; the parent waits. The child carries `parent_id`/`parent_step`; its end — whatever ends it — owes a
 * `child_ended` to the parent's object (trigger `job_child_end`, migration 0028), which ends the entry with the
 * child's outcome. The parent is due again once no child of its is left open, or at once when one did not complete
 * (so it may catch the failure). A parent that is cancelled or fails cancels the children it still waits for.
 *
 * @module
 */
import { plainBytes } from "../../sealing/vault";
import { crossingOf } from "../../residency";
import { homeOfJobId } from "../../job/home";
import { requireDeclared } from "../../config/known-types";
import { QueueError } from "../../errors";
import { childLocalId } from "../../job/derived-id";
import type { WaitItem } from "../../job/handler-contract";
import { checkJsonSize, utf8Length } from "../../job/json-size";
import type { EnqueueRequest } from "../../job/schemas";
import { checkRequest, type RequestShapes } from "./invoke-request";
import { enqueueJobs, type EnqueueOutcome, type NewJob } from "../jobs/enqueue";
import type { HomeStore } from "../jobs/home-store";
import type { JobRow } from "../jobs/job-row";
import { prepareJob } from "../jobs/new-job";
import { OUTBOX_GRACE_MS, owe } from "./outbox";
import { unwaitEvents } from "./event-waits";
import { getJob } from "../jobs/read";
import { jsonChunks } from "../jobs/json-chunks";
import { JOURNAL_BYTES, type OpenStep, type StepAt } from "./steps";

/** A child as its home enqueues it: the job, and the parent waiting for it (NewJob's parentId, parentStep, parentSeq). */
export type OwedJob = NewJob;

/** A child's end as its parent's object hears it (the trigger's json_object). */
export interface ChildEnd {
  step: string;
  /** The invoke's position in the parent's journal. */
  seq: number;
  child: string;
  /** A terminal state, or `refused`: the child's home did not take it (its dedupe key held by another job). */
  state: string;
  result: unknown;
  error: string | null;
  failureKind: string | null;
  reason?: string | null;
}

/** How long the children a full home had no room for wait before it is asked again. */
const FULL_RETRY_MS = 1_000;
/**
 * Children one owed enqueue carries at most: a fan-out of up to 1,000 per home goes out as one row, enqueued in one
 * transaction, as a 1,000-job batch is (rows of 100 made a 1,000-child fan-in's children land in ten rounds). Also
 * cut by size, as a batch insert's parameter is (json-chunks.ts): a row is one SQLite string.
 */
const OWED_CHUNK = 1000;

/** The open invokes among positions, with the child each names (job_step's key). */
const INVOKES_OPEN = "SELECT seq, ref FROM job_step WHERE job_seq = ?1 AND seq IN (SELECT value FROM json_each(?2)) AND kind = 'invoke' AND finished_at IS NULL";
/**
 * Invokes end, one statement for a parent's ends of a delivery: ?2 is [[position, result, bytes], …]. MATERIALIZED:
 * the ends are the outer loop, each a seek on job_step's key (joined to json_each directly, SQLite scans the
 * journal once per end: a 1,000-child fan-in took 380 ms).
 */
const INVOKES_END = `
WITH e AS MATERIALIZED (SELECT value ->> 0 AS seq, value ->> 1 AS result, value ->> 2 AS bytes FROM json_each(?2))
UPDATE job_step SET result = e.result, finished_at = ?3, bytes = job_step.bytes + e.bytes
  FROM e
 WHERE job_step.job_seq = ?1 AND job_step.seq = e.seq AND job_step.kind = 'invoke' AND job_step.finished_at IS NULL`;
const CHILDREN_COUNT = "UPDATE job SET children_open = (SELECT count(*) FROM job_step WHERE job_seq = ?1 AND kind = 'invoke' AND finished_at IS NULL) WHERE seq = ?1";
const CHILDREN_DOWN = "UPDATE job SET children_open = max(children_open - ?2, 0) WHERE seq = ?1 RETURNING children_open";
/** The open children of a job, each owed a cancel. */
const CANCEL_CHILDREN = `
INSERT INTO outbox (kind, target, body, next_at)
SELECT 'cancel', ref, json_object('reason', ?2), ?3 FROM job_step WHERE job_seq = ?1 AND kind = 'invoke' AND finished_at IS NULL AND ref IS NOT NULL`;

/**
 * journalInvoke: a new invoke wait, inside wait()'s transaction — its request checked as an enqueue is (an error
 * names the field), its position free. Answers the child to owe and the entry to journal, or why the job fails.
 */
export function journalInvoke(store: HomeStore, parent: JobRow, w: WaitItem, now: number, at: StepAt | null, shapes: RequestShapes = new Map()): { refused: string; nondeterminism?: true } | { home: string; job: OwedJob; step: OpenStep } {
  const call = `ctx.invoke(${JSON.stringify(w.name)})`;
  if (at) return { refused: `NondeterminismError: step ${w.seq} is ${JSON.stringify(at.name)} in the journal, ${JSON.stringify(w.name)} in the code`, nondeterminism: true };
  const checked = checkRequest(w.request, shapes);
  if (!checked.ok) return { refused: `${call}: ${["request", ...checked.path].join(".")}: ${checked.message}` };
  const request: EnqueueRequest = { ...checked.request, id: childLocalId(parent.id, w.seq) };
  const payload = JSON.stringify(request.payload);
  let prepared: ReturnType<typeof prepareJob>;
  try {
    requireDeclared(store.config, [request.type], () => "type");
    checkJsonSize(payload, store.config.limits.payloadMaxBytes, "payload");
    prepared = prepareJob(store.config, request, payload, now); // its limit key (docs/guards.md "Keyed limits")
  } catch (e) {
    if (e instanceof QueueError) return { refused: `${call}: ${e.message}` };
    throw e;
  }
  const { home, job } = prepared;
  // A child's payload goes to its object, and its result comes back: both stay in one jurisdiction (src/residency.ts).
  const crossing = crossingOf(store.config, homeOfJobId(parent.id)?.name ?? home, home);
  if (crossing) return { refused: `${call}: ${crossing}` };
  // Journaled with the others of its wait in one statement (steps.ts writeOpenSteps), with its child's id.
  // Its payload waits in the outbox sealed, as it will be kept in the child's object (sealing/vault.ts).
  return { home, job: { ...job, payload: store.lens.seal(job.payload), parentId: parent.id, parentStep: w.name, parentSeq: w.seq }, step: { seq: w.seq, name: w.name, kind: "invoke", startedAt: w.startedAt, ref: job.id } };
}

/** oweChildren: the children a wait journaled, one owed enqueue per home and chunk; the parent's count of open ones. */
export function oweChildren(store: HomeStore, parent: JobRow, children: readonly { home: string; job: OwedJob }[], now: number): void {
  const byHome = new Map<string, OwedJob[]>();
  for (const c of children) {
    const list = byHome.get(c.home);
    if (list) list.push(c.job);
    else byHome.set(c.home, [c.job]);
  }
  for (const [home, jobs] of byHome) {
    // Each child's JSON once, its length the exact measure of the row it goes into (a tag-heavy child is not small).
    const texts = jobs.map((j) => JSON.stringify(j));
    for (let i = 0; i < texts.length; i += OWED_CHUNK) {
      for (const part of jsonChunks(texts.slice(i, i + OWED_CHUNK), (t) => t.length + 1)) owe(store, "enqueue", home, `[${part.join(",")}]`, now);
    }
  }
  store.sql.exec(CHILDREN_COUNT, parent.seq);
}

/**
 * enqueueOwed: an owed enqueue arrives (children, or a failure handler). Children get their parent; a child whose
 * key another job holds is refused back to its parent, and one that had ended already (a parent retried by hand
 * owes it again) tells its end again. `retry`: the home is full — send again later.
 */
export function enqueueOwed(store: HomeStore, jobs: readonly OwedJob[], now: number, home: string): { out: EnqueueOutcome; retry: boolean } {
  try {
    return enqueueOwedIn(store, jobs, now, home);
  } catch (e) {
    // A home full for one of a chunk's jobs, after the chunk conflicted: nothing of it stays; sent again later.
    if (e instanceof QueueFullAfterAll) return { out: { ok: false, code: "queue_full", index: 0, message: e.message }, retry: true };
    throw e;
  }
}

function enqueueOwedIn(store: HomeStore, jobs: readonly OwedJob[], now: number, home: string): { out: EnqueueOutcome; retry: boolean } {
  return store.atomic(() => {
    // Children due now may go straight to a handler: the write's commit starts their calls (scope/push/straight.ts).
    let out = enqueueJobs(store, jobs, now, { straight: true });
    if (!out.ok && out.code === "queue_full" && jobs.length === 1) return { out, retry: true };
    /** Jobs of the chunk owed again for want of room; and refused ones, told already. */
    const deferred = new Set<number>();
    if (!out.ok) {
      // One job of the chunk conflicts, or the chunk does not fit under the type's maxDepth: the jobs go in one by
      // one; refused ones are told to their parents, and those the home has no room for yet are owed again (to this
      // very home, with the outbox's backoff), so a fan-out larger than maxDepth lands as room frees.
      const results: Extract<EnqueueOutcome, { ok: true }>["results"] = [];
      // Older jobs of keys a child's cancelRunning or cancelPending ended (jobs/key-cancel.ts): told as the chunk's would be.
      const superseded: JobRow[] = [];
      const full: OwedJob[] = [];
      for (const [i, job] of jobs.entries()) {
        const one = enqueueJobs(store, [job], now);
        if (one.ok) {
          results.push(one.results[0]!);
          superseded.push(...(one.superseded ?? []));
        }
        else if (one.code === "queue_full") {
          full.push(job);
          deferred.add(i);
          results.push({ row: null, created: false });
        } else {
          results.push({ row: null, created: false });
          deferred.add(i);
          if (job.parentId) tellParent(store, job, { state: "refused", result: null, error: one.message, failureKind: null }, now);
          else console.error(JSON.stringify({ event: "outbox:enqueue_refused", id: job.id, type: job.type, error: one.message }));
        }
      }
      if (full.length === jobs.length) throw new QueueFullAfterAll();
      if (full.length > 0) owe(store, "enqueue", home, JSON.stringify(full), now, FULL_RETRY_MS);
      out = superseded.length > 0 ? { ok: true, results, superseded } : { ok: true, results };
    }
    // A created child was inserted with its parent (enqueue.ts); one found is told of, or refused back.
    out.results.forEach((r, i) => {
      const job = jobs[i]!;
      if (!job.parentId || deferred.has(i)) return;
      if (!r.row) {
        // Its id names a job deleted by retention (a tombstone): no child can be made under it.
        tellParent(store, job, { state: "refused", result: null, error: `job id ${job.id} was used by a job deleted since`, failureKind: null }, now);
        return;
      }
      if (r.created) return;
      if (r.row.id !== job.id) {
        tellParent(store, job, { state: "refused", result: null, error: `dedupe key ${JSON.stringify(job.dedupeKey)} is held by job ${r.row.id}`, failureKind: null }, now);
      } else if (r.row.finished_at !== null) {
        tellParent(store, job, { state: r.row.state, result: r.row.result === null ? null : JSON.parse(r.row.result), error: r.row.last_error, failureKind: r.row.failure_kind }, now);
      }
    });
    return { out, retry: false };
  });
}

class QueueFullAfterAll extends Error {
  constructor() {
    super("the home is full");
  }
}

function tellParent(store: HomeStore, job: OwedJob, end: Omit<ChildEnd, "step" | "seq" | "child">, now: number): void {
  owe(store, "child_ended", job.parentId!, JSON.stringify({ step: job.parentStep, seq: job.parentSeq, child: job.id, ...end }), now);
}

/**
 * endInvokes: children's ends reach their parents — each ends the open entry naming it (a second telling finds it
 * ended and changes nothing), in one transaction for all of a delivery, each parent's journal size read once.
 * Answers the parents now due again: waiting, and no child left open or one that did not complete. A parent that
 * finished still records them (a retry by hand replays to them).
 */
export function endInvokes(store: HomeStore, ends: readonly { parentId: string; end: ChildEnd }[], now: number, resume: (seq: number, why: string) => JobRow | null): JobRow[] {
  return store.atomic(() => {
    const byParent = new Map<string, ChildEnd[]>();
    for (const { parentId, end } of ends) {
      const list = byParent.get(parentId);
      if (list) list.push(end);
      else byParent.set(parentId, [end]);
    }
    const cap = store.config.limits.journalMaxBytes;
    const due: JobRow[] = [];
    for (const [parentId, list] of byParent) {
      const row = getJob(store.sql, parentId);
      if (!row) continue;
      // Open, and this child's: anything else was told already (or is a stray), and changes nothing.
      const open = new Map(
        store.sql
          .exec<{ seq: number; ref: string | null }>(INVOKES_OPEN, row.seq, JSON.stringify(list.map((e) => e.seq)))
          .toArray()
          .map((r) => [r.seq, r.ref]),
      );
      let size = store.sql.exec<{ n: number }>(JOURNAL_BYTES, row.seq).one().n;
      const ended: [number, string, number][] = [];
      let failed: ChildEnd | null = null;
      let last: ChildEnd | null = null;
      for (const end of list) {
        if (open.get(end.seq) !== end.child) continue;
        open.delete(end.seq);
        // A completed child's entry holds its result alone beside its id: a fan-in's journal ships with every replay.
        let result = JSON.stringify(end.state === "completed" ? { child: end.child, state: end.state, result: end.result ?? null } : { child: end.child, state: end.state, result: null, error: (end.state === "cancelled" ? end.reason : null) ?? end.error ?? end.reason ?? null, failureKind: end.failureKind });
        if (size + plainBytes(result, cap) > cap) {
          // The parent could never replay past a journal over its cap: it hears of the child as failed, and why.
          result = JSON.stringify({ child: end.child, state: "failed", result: null, error: `journal_too_large: the child's result would take its parent's journal past ${cap} bytes (limits.journalMaxBytes)`, failureKind: "fatal" });
        }
        const bytes = plainBytes(result, 0);
        size += bytes;
        ended.push([end.seq, result, bytes]);
        last = end;
        if (end.state !== "completed") failed ??= end;
      }
      if (ended.length === 0) continue;
      store.sql.exec(INVOKES_END, row.seq, JSON.stringify(ended), now);
      const left = store.sql.exec<{ children_open: number }>(CHILDREN_DOWN, row.seq, ended.length).one().children_open;
      if (row.state !== "waiting" || (left > 0 && failed === null)) continue;
      const why = failed ?? last!;
      const resumed = resume(row.seq, `child ${why.child} (${JSON.stringify(why.step)}) ${why.state}${left === 0 ? "" : `, ${left} still open`}`);
      if (resumed) due.push(resumed);
    }
    return due;
  });
}

/**
 * abandonWaits: jobs that ended (cancelled, failed) with waits open — the children they still wait for are owed a
 * cancel (unless `cascade` is false), their event waits their registries' drop (inside the caller's transaction).
 */
export function abandonWaits(store: HomeStore, rows: readonly JobRow[], now: number, cascade = true): void {
  unwaitEvents(store, rows, now);
  if (!cascade) return;
  for (const r of rows) {
    if (store.sql.exec(CANCEL_CHILDREN, r.seq, `its parent ${r.id} is ${r.state}`, now + OUTBOX_GRACE_MS).rowsWritten > 0) store.feed.owe();
  }
}

/** The children a job invoked, in journal order: each step's name and the child's id (`GET /v1/jobs/{id}/children`). */
const CHILDREN_OF = "SELECT seq, name, ref FROM job_step WHERE job_seq = ? AND kind = 'invoke' AND ref IS NOT NULL AND seq > ? ORDER BY seq LIMIT ?";

export function childrenOf(store: HomeStore, parentId: string, afterSeq: number, limit: number): { step: string; id: string; seq: number }[] | null {
  const parent = getJob(store.sql, parentId);
  if (!parent) return null;
  return store.sql
    .exec<{ name: string; ref: string; seq: number }>(CHILDREN_OF, parent.seq, afterSeq, limit)
    .toArray()
    .map((r) => ({ step: r.name, id: r.ref, seq: r.seq }));
}
