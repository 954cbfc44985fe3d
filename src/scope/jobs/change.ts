/**
 * Caller-driven changes: cancel one job, cancel a whole scope, retry a failed
 * or cancelled job. Each is one guarded UPDATE; a refusal says why.
 *
 * @module
 */
import { sqlList } from "../../job/states";
import { TRANSITIONS } from "../../job/transitions";
import { jobRows, oneJobRow, type JobRow } from "./job-row";
import type { Outcome } from "./outcome";
import { byId, getJob, idSeq, liveJobsOfKey } from "./read";
import type { HomeStore } from "./home-store";
import { payCounts } from "./tallies";

const CANCEL_SET = `
   SET state = '${TRANSITIONS.cancel.to}', cancel_reason = ?, finished_at = ?, updated_at = ?,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, wait = NULL, pause_asked = NULL`;

/** jobCancelIfLive: pending|running|waiting → cancelled. The lease is revoked, so the holder's next call is lease_lost. */
const JOB_CANCEL_IF_LIVE = `UPDATE job ${CANCEL_SET} WHERE ${byId("?4", "?5")} AND state IN (${sqlList(TRANSITIONS.cancel.from)}) RETURNING *`;

/** jobCancelAllInStates: a whole scope; the state list is one of two constants below. */
const JOB_CANCEL_ALL_LIVE = `UPDATE job ${CANCEL_SET} WHERE state IN (${sqlList(TRANSITIONS.cancel.from)}) RETURNING *`;
const JOB_CANCEL_ALL_PENDING = `UPDATE job ${CANCEL_SET} WHERE state = 'pending' RETURNING *`;

/** jobCancelLiveOfKeys: the live jobs of one type under any of the keys (json array); job_dedupe_idx per key. */
const JOB_CANCEL_LIVE_OF_KEYS = `UPDATE job ${CANCEL_SET}
 WHERE dedupe_key IN (SELECT value FROM json_each(?)) AND type = ? AND state IN (${sqlList(TRANSITIONS.cancel.from)}) RETURNING *`;

/**
 * payHeldFirst: before a cancel that may end a held retry (held-retries.ts), what its hold owes the counts is written,
 * so the cancel's own count (the trigger's, at once) never takes `pending` below what is there.
 */
function payHeldFirst(store: HomeStore, id?: string): void {
  if (id === undefined ? store.pushed.held.size > 0 : store.pushed.held.has(id)) payCounts(store);
}

/** cancelKeys: cancel the live jobs of `type` under these dedupe keys here. */
export function cancelKeys(store: HomeStore, type: string, keys: readonly string[], reason: string | null, now: number): JobRow[] {
  return store.atomic(() => {
    // A held retry has no key (attempt-end.ts): nothing held is cancelled here.
    const rows = jobRows(store.sql.exec(JOB_CANCEL_LIVE_OF_KEYS, reason, now, now, JSON.stringify(keys), type));
    store.hooks.ended(store, rows, now, true);
    if (rows.length > 0) store.touched(now);
    return rows;
  });
}

/** jobRetryIfFinishedUnsuccessfully: failed|cancelled|superseded|expired → pending, due now, attempts 0, its expiry dropped (it is run by hand). */
const JOB_RETRY_IF_FAILED = `
UPDATE job
   SET state = '${TRANSITIONS.retry.to}', run_at = ?, attempts = 0, last_error = NULL, failure_kind = NULL,
       result = NULL, cancel_reason = NULL, finished_at = NULL, started_at = NULL, expires_at = NULL, updated_at = ?
 WHERE ${byId("?3", "?4")} AND state IN (${sqlList(TRANSITIONS.retry.from)})
RETURNING *`;


/** cancelJob: `cascade` false leaves the children the job waits for running (their ends still reach it). */
export function cancelJob(store: HomeStore, id: string, reason: string | null, now: number, cascade = true): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    payHeldFirst(store, id);
    const row = jobRows(store.sql.exec(JOB_CANCEL_IF_LIVE, reason, now, now, id, idSeq(id)))[0];
    if (row) {
      store.hooks.ended(store, [row], now, cascade);
      store.touched(now);
      return { ok: true, row };
    }
    const current = getJob(store.sql, id);
    return current ? { ok: false, code: "already_terminal", state: current.state } : { ok: false, code: "not_found" };
  });
}

export function cancelAll(store: HomeStore, pendingOnly: boolean, reason: string | null, now: number): JobRow[] {
  return store.atomic(() => {
    payHeldFirst(store);
    const rows = jobRows(store.sql.exec(pendingOnly ? JOB_CANCEL_ALL_PENDING : JOB_CANCEL_ALL_LIVE, reason, now, now));
    store.hooks.ended(store, rows, now, true);
    if (rows.length > 0) store.touched(now);
    return rows;
  });
}

export function retryJob(store: HomeStore, id: string, now: number): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    const current = getJob(store.sql, id);
    if (!current) return { ok: false, code: "not_found" };
    if (!(TRANSITIONS.retry.from as readonly string[]).includes(current.state)) {
      return { ok: false, code: "conflict", reason: `job is ${current.state}; only failed, cancelled, superseded or expired jobs can be retried`, state: current.state };
    }
    if (current.dedupe_key !== null) {
      const holder = liveJobsOfKey(store.sql, current.dedupe_key)[0];
      if (holder) return { ok: false, code: "conflict", reason: `live job ${holder.id} holds dedupe key ${JSON.stringify(current.dedupe_key)}`, state: current.state };
    }
    // An atMostOnce step that started and never finished runs again: the operator chose to retry, not to resolve it
    // (workflow/steps.ts forgets it).
    store.hooks.retrying(store, current, now);
    const row = oneJobRow(store.sql.exec(JOB_RETRY_IF_FAILED, now, now, id, idSeq(id)));
    // Its open event waits were dropped from their registries when it ended: they register again (workflow/event-waits.ts).
    store.hooks.retried(store, row, now);
    store.touched(now);
    return { ok: true, row };
  });
}

/**
 * jobFailedAfter: failed jobs in job_finished_idx order (state, finished_at,
 * seq), after a cursor — a page costs its own rows, however many are failed.
 */
const JOB_FAILED_AFTER = `
SELECT id, seq, finished_at FROM job
 WHERE state = 'failed' AND state <> 'completed' AND finished_at IS NOT NULL AND (finished_at, seq) > (?2, ?3) AND (?1 IS NULL OR type = ?1)
 ORDER BY finished_at, seq LIMIT ?4`;
export const RETRY_PAGE = 200;

export interface FailedCursor {
  finishedAt: number;
  seq: number;
}

/**
 * retryFailed: one page of failed jobs (of `type`, or all) back to pending,
 * one guarded retry each; a job whose dedupe key a live job holds stays failed
 * and is counted as skipped. `next` resumes after this page (null: done), so
 * a home with many failed jobs is worked through in bounded calls.
 */
export function retryFailed(
  store: HomeStore,
  type: string | null,
  after: FailedCursor | null,
  now: number,
  limit = RETRY_PAGE,
): { retried: number; skipped: number; next: FailedCursor | null; rows: JobRow[] } {
  const rows: JobRow[] = [];
  let skipped = 0;
  const page = store.sql
    .exec<{ id: string; seq: number; finished_at: number }>(JOB_FAILED_AFTER, type, after?.finishedAt ?? -1, after?.seq ?? -1, limit)
    .toArray();
  for (const { id } of page) {
    const out = retryJob(store, id, now);
    if (out.ok) rows.push(out.row);
    else skipped++;
  }
  const last = page[page.length - 1];
  return { retried: rows.length, skipped, rows, next: page.length === limit && last ? { finishedAt: last.finished_at, seq: last.seq } : null };
}
