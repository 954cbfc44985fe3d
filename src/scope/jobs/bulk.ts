/**
 * Bulk actions by filter (docs/http-api.md "Bulk actions"): a page of this object's jobs that match a filter, in
 * seq order after a cursor, each cancelled or retried by hand with the same guarded statement as a single
 * cancel or retry (change.ts). The coordinator pages through homes (coordinator/bulk-actions.ts); here, one page.
 * A job that changed leaves the states the action acts on, so paging on by seq never sees it twice.
 *
 * @module
 */
import { BULK_ACTS_ON as ACTS_ON, type BulkAction } from "../../job/transitions";
import { cancelJob, retryJob } from "./change";
import type { HomeStore } from "./home-store";
import type { JobRow } from "./job-row";
import { listJobs, type ListFilter } from "./read";


export interface BulkPage {
  /** Jobs the action changed. */
  changed: JobRow[];
  /** Jobs that matched but were left as they were: a retry whose dedupe key a live job holds, a job that moved meanwhile. */
  skipped: number;
  /** The seq to go on after, or null when this object has no more matching jobs. */
  next: number | null;
}

/** pageOf: at most `limit` matching jobs after `afterSeq`, the filter's states narrowed to those the action acts on. */
export function pageOf(sql: SqlStorage, action: BulkAction, filter: ListFilter, afterSeq: number, limit: number): JobRow[] {
  const acts: readonly string[] = ACTS_ON[action];
  const states = (filter.states ?? ACTS_ON[action]).filter((s) => acts.includes(s));
  return listJobs(sql, { ...filter, states }, afterSeq, limit);
}

/** nextOf: where the next page goes on (the page's last seq), or null when the page was not full. */
export function nextOf(page: readonly JobRow[], limit: number): number | null {
  return page.length === limit ? page[page.length - 1]!.seq : null;
}

/**
 * actOnPage: a page of matching jobs (the coordinator refuses a filter that leaves no state the action acts on)
 * cancelled (children too) or retried.
 */
export function actOnPage(store: HomeStore, action: Exclude<BulkAction, "rerun">, filter: ListFilter, afterSeq: number, limit: number, reason: string | null, now: number): BulkPage {
  const page = pageOf(store.sql, action, filter, afterSeq, limit);
  const changed: JobRow[] = [];
  for (const job of page) {
    if (action === "cancel") store.hooks.cancelling(store, { ids: [job.id] });
    const out = action === "cancel" ? cancelJob(store, job.id, reason, now) : retryJob(store, job.id, now);
    if (out.ok) changed.push(out.row);
  }
  return { changed, skipped: page.length - changed.length, next: nextOf(page, limit) };
}

/** countPage: a dry run's page — how many jobs the action would look at, changing nothing. */
export function countPage(sql: SqlStorage, action: BulkAction, filter: ListFilter, afterSeq: number, limit: number): { matched: number; next: number | null } {
  const page = pageOf(sql, action, filter, afterSeq, limit);
  return { matched: page.length, next: nextOf(page, limit) };
}
