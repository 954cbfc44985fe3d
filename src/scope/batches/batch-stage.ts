/**
 * Batches over several objects, all or none (docs/http-api.md "The HTTP API";
 * docs/design.md "Batches over several objects"). One object's enqueue is one
 * transaction; a batch whose jobs live in several objects is committed in two
 * phases:
 *
 * 1. stage: each object but the decider checks its part as the enqueue would
 *    (the same code, rolled back) and keeps it in `job_stage`, where nothing
 *    sees it;
 * 2. the batch's decider — one of those objects — enqueues its own part and
 *    records `commit` in one transaction once every other part staged, or
 *    records `abort` (a part was refused or failed, its own included),
 *    whichever comes first, once;
 * 3. each other object turns its stage into jobs (commit) or drops it (abort).
 *
 * A coordinator that dies anywhere in between leaves stages behind. Each
 * object's alarm asks the decider what was decided STAGE_ASK_MS after
 * staging, and again at doubling intervals: a batch the decider committed
 * (its part visible) becomes visible in the other objects about a second
 * later, not at the timeout. STAGE_TIMEOUT_MS after staging, the alarm asks
 * the decider to record `abort` unless `commit` is there already, and does
 * what it says. So every object ends the same way, and a batch either exists
 * whole or not at all. Plain functions over the object's SQLite.
 *
 * @module
 */
import { enqueueJobs, type Enqueued, type EnqueueOutcome, type EnqueueRefusal, type NewJob } from "../jobs/enqueue";
import { getJobs } from "../jobs/read";
import { publish } from "../workflow/event-waits";
import type { HomeStore } from "../jobs/home-store";
import type { WorkflowStore } from "../workflow/workflow-store";

/** How long a stage waits for its commit before the alarm asks the decider (which then aborts it unless committed). */
export const STAGE_TIMEOUT_MS = 30_000;
/** A stage still here this long after staging asks the decider what was decided (no proposal), then at doubling intervals. */
export const STAGE_ASK_MS = 1_000;
/** Decisions are kept this long: far past any stage's timeout. */
const DECISION_KEEP_MS = 24 * 3600_000;

export type Decision = "commit" | "abort";

const STAGE_INSERT = "INSERT INTO job_stage (batch, idx, job, staged_at, decider) SELECT ?1, key, value, ?2, ?3 FROM json_each(?4)";
const STAGE_TAKE = "DELETE FROM job_stage WHERE batch = ? RETURNING idx, job";
const STAGE_BATCHES = "SELECT batch, decider, min(staged_at) AS staged_at FROM job_stage GROUP BY batch, decider";
const DECISION_GET = "SELECT decision FROM batch_decision WHERE batch = ?";
const DECISION_PUT = "INSERT INTO batch_decision (batch, decision, decided_at) VALUES (?, ?, ?) ON CONFLICT (batch) DO NOTHING";
const DECISION_DROP = "DELETE FROM batch_decision WHERE decided_at < ?";

/** stage: keep this object's part of `batch` (already checked by the caller), to be committed or dropped. */
export function stage(store: HomeStore, batch: string, decider: string, jobs: readonly NewJob[], now: number): void {
  store.sql.exec(STAGE_INSERT, batch, now, decider, JSON.stringify(jobs.map((j) => JSON.stringify({ ...j, payload: store.lens.seal(j.payload) }))));
}

/** take: this object's part of `batch`, removed (inside the caller's transaction); null when none is staged. */
export function take(store: HomeStore, batch: string): NewJob[] | null {
  const rows = store.sql.exec<{ idx: number; job: string }>(STAGE_TAKE, batch).toArray();
  if (rows.length === 0) return null;
  return rows.sort((a, b) => a.idx - b.idx).map((r) => JSON.parse(r.job) as NewJob);
}

/**
 * decide: the batch's decision — `proposal` if none was recorded yet, else the one that was; with no proposal,
 * the decision or null while none is recorded (a stage asking early). Decisions a day old go.
 */
export function decide(store: HomeStore, batch: string, proposal: Decision, now: number): Decision;
export function decide(store: HomeStore, batch: string, proposal: Decision | null, now: number): Decision | null;
export function decide(store: HomeStore, batch: string, proposal: Decision | null, now: number): Decision | null {
  if (proposal === null) return store.sql.exec<{ decision: Decision }>(DECISION_GET, batch).toArray()[0]?.decision ?? null;
  return store.atomic(() => {
    store.sql.exec(DECISION_DROP, now - DECISION_KEEP_MS);
    store.sql.exec(DECISION_PUT, batch, proposal, now);
    return store.sql.exec<{ decision: Decision }>(DECISION_GET, batch).one().decision;
  });
}

/**
 * The decider's answer to committing with its own part: its jobs on commit (and, for an event's deliveries decided by
 * its topic's registry, how many waits the event ended); on abort, its own refusal if that was why.
 */
export type DecidingAnswer = { decision: "commit"; outcome: Extract<EnqueueOutcome, { ok: true }>; published?: number } | { decision: "abort"; refusal: EnqueueRefusal | null };

/**
 * An event published with the decision (docs/workflows.md "Waiting for an event"): its deliveries are the batch's
 * parts and its topic's registry decides, so the deliveries exist exactly when the registry took the event.
 */
export interface Publication {
  topic: string;
  eventId: string;
  /** JSON text of the event's payload. */
  payload: string;
}

/**
 * commitDeciding: the decider's own part and the commit decision in one transaction (every other part is
 * staged): its jobs exist exactly when `commit` is recorded. Refused, it records `abort` instead. A decision
 * already there wins: `abort` (a stage's alarm asked first) writes nothing; `commit` (this call sent again
 * after a lost answer) answers with the part's jobs as they are now, read by id (`created: false`).
 */
export function commitDeciding(store: WorkflowStore, batch: string, jobs: readonly NewJob[], now: number, publication?: Publication): DecidingAnswer {
  return store.atomic((): DecidingAnswer => {
    store.sql.exec(DECISION_DROP, now - DECISION_KEEP_MS);
    const prior = store.sql.exec<{ decision: Decision }>(DECISION_GET, batch).toArray()[0]?.decision;
    if (prior === "abort") return { decision: "abort", refusal: null };
    // Sent again after a lost answer: the part was enqueued then. Read its jobs back by id (an item answered then by
    // its key's job reads null now); enqueuing again could answer a key that has moved on with a new job.
    if (prior === "commit") return { decision: "commit", outcome: partAsItIs(store, jobs.map((j) => j.id)) };
    const outcome = enqueueJobs(store, jobs, now);
    if (!outcome.ok) {
      store.sql.exec(DECISION_PUT, batch, "abort", now);
      return { decision: "abort", refusal: outcome };
    }
    // The event is taken in the same transaction as the decision (its registry dedupes an id it holds).
    const published = publication ? publish(store, publication.topic, publication.eventId, publication.payload, now) : undefined;
    store.sql.exec(DECISION_PUT, batch, "commit", now);
    return published === undefined ? { decision: "commit", outcome } : { decision: "commit", outcome, published };
  });
}

/**
 * partAsItIs: a part applied earlier (its answer lost, or its alarm first), answered with its jobs as they are
 * now, read by id in one statement, none created. An item its key answered with another job reads null.
 */
export function partAsItIs(store: HomeStore, ids: readonly string[]): Extract<EnqueueOutcome, { ok: true }> {
  const rows = getJobs(store.sql, ids);
  return { ok: true, results: ids.map((id): Enqueued => ({ row: rows.get(id) ?? null, created: false })) };
}

/** staged: the batches staged here and not yet committed or dropped, with who decides each and when they were staged. */
export function staged(store: HomeStore): { batch: string; decider: string; stagedAt: number }[] {
  return store.sql.exec<{ batch: string; decider: string; staged_at: number }>(STAGE_BATCHES).toArray().map((r) => ({ batch: r.batch, decider: r.decider, stagedAt: r.staged_at }));
}
