/**
 * Progress kept on the job (docs/handlers.md "Progress"; job/progress.ts has the value's shape): the holder of a
 * live lease writes the latest value over the last, one row written per report. The SDK coalesces a handler's
 * reports (runtime/progress.ts), so a tight loop costs a few writes a second; a report changes nothing anyone
 * counts, and its watchers and the observer hear of it (follow-ups.ts).
 *
 * @module
 */
import { jobRows, type JobRow } from "../jobs/job-row";
import { leased, leaseRefusal } from "../jobs/lease";
import type { Refusal } from "../jobs/outcome";
import { idSeq } from "../jobs/read";
import type { HomeStore } from "../jobs/home-store";

/** One report: the job, the lease it is made under, and the value as JSON text (checked by the caller). */
export interface ProgressItem {
  id: string;
  token: string;
  value: string;
}

/** jobProgress: the latest value, under a live lease. Params ?1 now, ?2 id, ?3 token, ?4 idSeq(id), ?5 the JSON. */
const JOB_PROGRESS = `UPDATE job SET progress = ?5, progress_at = ?1 WHERE ${leased("?4")} RETURNING *`;

/** setProgress: each item kept under its lease, in one transaction; per item, whether it was (a refusal says why not). */
export function setProgress(store: HomeStore, items: readonly ProgressItem[], now: number): { answers: ({ ok: true; at: number } | Refusal)[]; rows: JobRow[] } {
  return store.atomic(() => {
    const rows: JobRow[] = [];
    const answers = items.map((item): { ok: true; at: number } | Refusal => {
      const row = jobRows(store.sql.exec(JOB_PROGRESS, now, item.id, item.token, idSeq(item.id), item.value))[0];
      if (!row) return leaseRefusal(store, item.id, item.token, now);
      rows.push(row);
      return { ok: true, at: now };
    });
    return { answers, rows };
  });
}
