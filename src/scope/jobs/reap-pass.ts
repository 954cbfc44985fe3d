/**
 * The reap pass: running jobs whose lease expired go back to pending with a
 * backoff (the expired attempt counts, invariant 5), or to failed — `timeout`
 * when the lease ran out at the job's `timeoutMs`, else `stalled` — on their
 * last attempt. Run by the alarm; tests may call `reapOnce` directly.
 *
 * @module
 */
import { applyAttemptEnd, decideAttemptEnd } from "./attempt-end";
import { jobRows, timedOut as timedOutAt, type JobRow } from "./job-row";
import type { HomeStore } from "./home-store";
import { getJobs } from "./read";

/** jobFindExpiredLeases: uses job_lease_idx (lease_expires_at) WHERE running — the leases not held in memory. */
export const JOB_FIND_EXPIRED_LEASES = `
SELECT * FROM job WHERE state = 'running' AND lease_kept = 1 AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ?`;

export const REAP_BATCH = 200;

export interface ReapResult {
  retried: number;
  failed: number;
  /** The rows as the pass left them. */
  rows: JobRow[];
  /** True when the batch was full: more may be waiting, come back soon. */
  more: boolean;
}

/**
 * heldExpired: the rows of the pushed leases memory says have expired (pushed-leases.ts). Memory may be early (a
 * lease renewed by a step) or hold a job that ended another way (a cancel): the rows say. Memory is changed only
 * once the pass commits (reapOnce): a rolled-back pass must leave those leases held.
 */
function heldExpired(store: HomeStore, now: number, limit: number): { ids: string[]; rows: JobRow[] } {
  const ids = store.pushed.expired(now).slice(0, limit);
  return { ids, rows: ids.length === 0 ? [] : [...getJobs(store.sql, ids).values()] };
}

export function reapOnce(store: HomeStore, now: number, limit = REAP_BATCH): ReapResult {
  let held: { ids: string[]; rows: JobRow[] } = { ids: [], rows: [] };
  const out = store.atomic(() => {
    const indexed = jobRows(store.sql.exec(JOB_FIND_EXPIRED_LEASES, now, limit));
    held = heldExpired(store, now, limit - indexed.length);
    const expired = [...indexed, ...held.rows.filter((r) => r.state === "running" && r.lease_expires_at !== null && r.lease_expires_at <= now)];
    let retried = 0;
    let failed = 0;
    const rows: JobRow[] = [];
    for (const row of expired) {
      const timedOut = timedOutAt(row, row.lease_expires_at ?? 0);
      const end = decideAttemptEnd(
        store,
        row,
        {
          error: timedOut ? `attempt ${row.attempts} timed out after ${row.timeout_ms} ms` : `lease expired (attempt ${row.attempts}, worker ${row.lease_owner ?? "?"})`,
          fatal: false,
          consumesAttempt: true,
          exhaustedKind: timedOut ? "timeout" : "stalled",
        },
        now,
      );
      const after = applyAttemptEnd(store, row, end, now);
      if (!after) continue;
      rows.push(after);
      if (end.to === "pending") retried++;
      else failed++;
    }
    if (expired.length > 0) store.touched(now);
    return { retried, failed, rows, more: expired.length === limit };
  });
  // Committed: the leases read are forgotten, and those still live (renewed meanwhile) held again at their expiry.
  store.pushed.forget(held.ids);
  store.pushed.note(held.rows.filter((r) => r.lease_expires_at !== null && r.lease_expires_at > now));
  return { ...out, more: out.more || store.pushed.expired(now).length > 0 };
}
