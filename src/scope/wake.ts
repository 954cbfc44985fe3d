/**
 * The one function that says when this object must next wake (DESIGN.md §3,
 * invariant 4): the earliest of
 *
 * - the next pending job to become due (a job already due needs no wake-up
 *   for pull workers; it is there for the next claim),
 * - the earliest lease expiry (the reap pass): in job_lease_idx, or held in
 *   memory for a pushed attempt (pushed-leases.ts),
 * - the next retention sweep,
 * - the deadline for a catalog summary that has not gone out,
 * - the end of a permit hold a cancel left (pull-permits.ts),
 * - the earliest timeout of a waiting job's waits (waits.ts; job_wait_idx),
 * - the next send of an owed item (outbox.ts; outbox_next_idx), and of a completion callback (callbacks.ts),
 * - the earliest expiry of a job never started (expiry.ts; kept in memory by ExpiryMemo).
 *
 * @module
 */
import { LEVEL_JOB, levelsCte } from "./jobs/levels";
import { PENDING_UNPAUSED_COUNT, pendingTypes } from "./jobs/counts";
import { OLDEST_FINISHED_COLUMNS, sweepAtOf } from "./retention/sweep-pass";
import type { HomeStore } from "./jobs/home-store";
import type { WakeMemo, WakeRow } from "./jobs/wake-memo";
// A wait with no timeout is due at the end of time, which no alarm can be set for.
import { WAIT_FOREVER } from "./workflow/wait-entries";

/**
 * jobNextWake: every time above that lives in SQLite, in one statement (it runs after every write; as a
 * statement per part it was six calls into SQLite and the most frequent work of a small call): the next future
 * run_at of each unpaused pending type (one seek per priority level, levels.ts), the earliest lease expiry
 * (job_lease_idx), the end of a permit hold a cancel left (pull-permits.ts), the earliest wait timeout
 * (job_wait_idx), and the retention sweep's inputs.
 */
const JOB_NEXT_WAKE = `
WITH RECURSIVE ${levelsCte(`SELECT c.type FROM type_count AS c WHERE ${PENDING_UNPAUSED_COUNT}`)}
SELECT
  (SELECT min((SELECT min(j.run_at) FROM job AS j WHERE ${LEVEL_JOB} AND j.run_at > ?1)) FROM lv WHERE lv.p IS NOT NULL) AS due,
  (SELECT min(lease_expires_at) FROM job WHERE state = 'running' AND lease_kept = 1) AS lease,
  (SELECT min(hold_until) FROM job_permit) AS hold,
  (SELECT min(run_at) FROM job WHERE state = 'waiting' AND run_at < ${WAIT_FOREVER}) AS waiting,
  (SELECT min(next_at) FROM outbox) AS owed,
  (SELECT min(next_at) FROM callback_out WHERE dead_at IS NULL) AS calls,
  ${OLDEST_FINISHED_COLUMNS}`;

/** readWakeRow: JOB_NEXT_WAKE's row at `now` (wake-memo.ts keeps it while it stands). */
export function readWakeRow(store: HomeStore, now: number): WakeRow {
  return store.sql.exec<WakeRow>(JOB_NEXT_WAKE, now).one();
}

/** nextWakeAt: the earliest of the times above, from the wake-up's row (kept by the memo while it stands). */
export function nextWakeAt(store: HomeStore, now: number, reportDeadline: number | null, memo: WakeMemo): number | null {
  const row = memo.wake(now);
  // Pushed attempts' leases are held in memory, not in job_lease_idx (pushed-leases.ts).
  const times = [row.due, row.lease, store.pushed.earliest(), row.hold, row.waiting, row.owed, row.calls, store.expiries.next(), sweepAtOf(store, row, now), reportDeadline].filter((t): t is number => t !== null && t !== undefined);
  return times.length ? Math.min(...times) : null;
}

/** jobCameDue: one seek per priority level of the type (levels.ts). */
const JOB_CAME_DUE = `
WITH RECURSIVE ${levelsCte("SELECT ?1 AS type")}
SELECT 1 AS due FROM lv, job AS j WHERE lv.p IS NOT NULL AND ${LEVEL_JOB} AND j.run_at > ?2 AND j.run_at <= ?3 LIMIT 1`;

/**
 * cameDueSince: the types with a pending job that became due in (since, now]
 * (without a `since`, any due one). Its row did not change, but the catalog's
 * split of pending into due and scheduled did, and parked pull claims may take it.
 */
export function cameDueSince(store: HomeStore, since: number | null, now: number): string[] {
  return pendingTypes(store.sql).filter((type) => store.sql.exec(JOB_CAME_DUE, type, since ?? -1, now).toArray().length > 0);
}

