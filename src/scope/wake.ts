/**
 * The one function that says when this object must next wake (DESIGN.md §3,
 * invariant 4): the earliest of
 *
 * - the next pending job to become due (a job already due needs no wake-up
 *   for pull workers; it is there for the next claim),
 * - the earliest lease expiry (the reap pass),
 * - the next retention sweep,
 * - the deadline for a catalog summary that has not gone out,
 * - the end of a permit hold a cancel left (pull-permits.ts).
 *
 * @module
 */
import { pendingTypes } from "./counts";
import { nextSweepAt } from "./sweep-pass";
import type { ScopeStore } from "./store";

/** jobNextFutureRunAt: job_due_idx (type, run_at) — one seek per pending type. */
const JOB_NEXT_FUTURE_RUN_AT = "SELECT min(run_at) AS t FROM job WHERE state = 'pending' AND type = ? AND run_at > ?";
/** jobNextLeaseExpiry: job_lease_idx; and the end of a permit hold a cancel left (pull-permits.ts), in the same call. */
const JOB_NEXT_LEASE_EXPIRY = "SELECT (SELECT min(lease_expires_at) FROM job WHERE state = 'running') AS t, (SELECT min(hold_until) FROM job_permit) AS hold";

export function nextWakeAt(store: ScopeStore, now: number, reportDeadline: number | null): number | null {
  const times: number[] = [];
  for (const type of pendingTypes(store.sql)) {
    const t = store.sql.exec<{ t: number | null }>(JOB_NEXT_FUTURE_RUN_AT, type, now).one().t;
    if (t !== null) times.push(t);
  }
  const { t: lease, hold } = store.sql.exec<{ t: number | null; hold: number | null }>(JOB_NEXT_LEASE_EXPIRY).one();
  if (lease !== null) times.push(lease);
  if (hold !== null) times.push(hold);
  const sweep = nextSweepAt(store);
  if (sweep !== null) times.push(sweep);
  if (reportDeadline !== null) times.push(reportDeadline);
  return times.length ? Math.min(...times) : null;
}

/** jobCameDue: job_due_idx (type, run_at) — one seek per pending type. */
const JOB_CAME_DUE = "SELECT 1 AS due FROM job WHERE state = 'pending' AND type = ? AND run_at > ? AND run_at <= ? LIMIT 1";

/**
 * cameDueSince: the types with a pending job that became due in (since, now]
 * (without a `since`, any due one). Its row did not change, but the catalog's
 * split of pending into due and scheduled did, and parked pull claims may take it.
 */
export function cameDueSince(store: ScopeStore, since: number | null, now: number): string[] {
  return pendingTypes(store.sql).filter((type) => store.sql.exec(JOB_CAME_DUE, type, since ?? -1, now).toArray().length > 0);
}

