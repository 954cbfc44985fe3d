/**
 * Inline claims (docs/producers.md "Inline claims"): a request that must run now runs in
 * the caller, and the queue still guarantees one runner per key.
 *
 * `claimOrEnqueue` enqueues under the key in `pending` mode and, when no job of
 * the key is running, leases that pending job to the caller — in one
 * transaction, so no claim or dispatch can take it in between. When a job of the
 * key is running, the request becomes (or coalesces into) its follower and the
 * caller gets no lease. `claimKey` leases the key's pending follower once its
 * running job is over (the caller drains the key).
 *
 * @module
 */
import { jobRows, type JobRow } from "./job-row";
import { JOB_SET_RUNNING_IF_PENDING, mayStart } from "./claim";
import { isPaused } from "./pause-gate";
import { enqueueJobs, type EnqueueRefusal, type NewJob } from "./enqueue";
import { liveJobsOfKey } from "./read";
import { newLeaseToken, type HomeStore } from "./home-store";

export type InlineClaim = { ok: true; job: JobRow; created: boolean; leased: JobRow | null } | EnqueueRefusal;

export function claimOrEnqueue(store: HomeStore, job: NewJob, worker: string, leaseMs: number, now: number): InlineClaim {
  return store.atomic(() => {
    const out = enqueueJobs(store, [job], now);
    if (!out.ok) return out;
    const { row, created } = out.results[0]!;
    // Its id belonged to a job retention deleted: nothing was created, so there is nothing to run.
    if (row === null) return { ok: false, code: "conflict", index: 0, message: `id ${job.id} belonged to a job that was completed and deleted; it is kept as done (retention.idempotencyMs)` };
    const leased = leaseIfFree(store, job.type, job.dedupeKey!, worker, leaseMs, now);
    return { ok: true, job: leased ?? row, created, leased };
  });
}

/** claimKey: lease the key's pending job when none of the key is running; null otherwise. */
export function claimKey(store: HomeStore, type: string, dedupeKey: string, worker: string, leaseMs: number, now: number): JobRow | null {
  return store.atomic(() => leaseIfFree(store, type, dedupeKey, worker, leaseMs, now));
}

/**
 * leaseIfFree: the key's pending job of this type, if it is due and no job of the key runs. A job
 * that is delayed, backing off after a failed attempt or sleeping is not taken early: the request
 * joins it and it runs when it is due. A paused type's job waits for the resume; a serialized or ordered
 * type's waits for its turn.
 */
function leaseIfFree(store: HomeStore, type: string, key: string, worker: string, leaseMs: number, now: number): JobRow | null {
  const live = liveJobsOfKey(store.sql, key);
  if (live.some((j) => j.state === "running" || j.state === "waiting")) return null;
  // The oldest pending job: a follower waits behind a journaled job of its key that is back to pending (attempt-end.ts).
  const pending = live.filter((j) => j.state === "pending").sort((a, b) => a.seq - b.seq)[0];
  if (!pending || pending.type !== type || pending.run_at > now || isPaused(store.sql, type)) return null;
  // One at a time (serializeByScope, ordered) holds here as in any claim; an ordered type leases its head only.
  if (!mayStart(store, type, pending.seq, now)) return null;
  const row = jobRows(store.sql.exec(JOB_SET_RUNNING_IF_PENDING, now, leaseMs, newLeaseToken(), worker, pending.seq, 1))[0] ?? null;
  if (row) store.touched(now);
  return row;
}
