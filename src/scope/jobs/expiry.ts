/**
 * Expiry before start (docs/guards.md "Expiry before start"): a job with an `expires_at` that has never started
 * when it passes ends `expired` and never runs. Two parts hold that:
 *
 * - no claim leases it: the claim's lease statements (claim.ts) skip a row past its expiry, so a job never starts
 *   after it, whatever the alarm's timing;
 * - the alarm ends it: the wake-up (wake.ts) includes the earliest expiry (`ExpiryMemo`), and the alarm's pass
 *   runs `expireDue`, so the job is counted, listed and evented as expired, its dedupe key freed and its parent
 *   told (job_child_end) within the alarm's latency.
 *
 * Only a job never started (`started_at IS NULL`, as after enqueue or a manual retry) is in job_expiry_idx: one
 * that ran and is back to pending for a retry, a sleep or a resumed wait never expires. A job without an expiry
 * has no entry and costs nothing here: the earliest expiry is kept in memory (`ExpiryMemo`), so an object none of
 * whose jobs expires reads nothing for it after its first wake-up.
 *
 * @module
 */
import { TRANSITIONS } from "../../job/transitions";
import type { HomeStore } from "./home-store";
import { jobRows, type JobRow } from "./job-row";

/** The reason an expired job carries (`cancelReason`), and its history shows. */
export const EXPIRED_REASON = "not started before it expired";

/**
 * jobExpireDue: the never-started pending jobs whose expiry passed, oldest expiry first, a bounded batch
 * (job_expiry_idx), ended in one statement. ?1 reason, ?2 now, ?3 limit.
 */
const JOB_EXPIRE_DUE = `
UPDATE job SET state = '${TRANSITIONS.expire.to}', cancel_reason = ?1, finished_at = ?2, updated_at = ?2
 WHERE seq IN (SELECT seq FROM job WHERE state = 'pending' AND started_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?2
                ORDER BY expires_at LIMIT ?3)
RETURNING *`;

/**
 * NOT_EXPIRED: the claim's guard, for statements whose ?1 is now — a row past its expiry that never started is not
 * leased, even before the alarm has ended it.
 */
export const NOT_EXPIRED = "(expires_at IS NULL OR started_at IS NOT NULL OR expires_at > ?1)";

/** expireDue: the jobs whose expiry passed, ended; `more` when the pass filled its batch. Reads nothing when none can be due. */
export function expireDue(store: HomeStore, now: number, limit = 500): { rows: JobRow[]; more: boolean } {
  if (!store.expiries.due(now)) return { rows: [], more: false };
  return store.atomic(() => {
    const rows = jobRows(store.sql.exec(JOB_EXPIRE_DUE, EXPIRED_REASON, now, limit));
    store.expiries.passed();
    if (rows.length > 0) store.touched(now);
    return { rows, more: rows.length === limit };
  });
}
