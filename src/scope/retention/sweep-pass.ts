/**
 * The retention sweep: terminal jobs older than their state's retention are
 * deleted, a bounded batch per run. Also `prune`, the same delete on demand.
 *
 * @module
 */
import { TERMINAL_STATES, type TerminalState } from "../../job/states";
import type { HomeStore } from "../jobs/home-store";
import { bury, sweepTombstones } from "../jobs/tombstones";
import { tallyDeleted } from "../jobs/tallies";
import { JOB_DELETE_BY_SEQ, type CompletedSweep } from "./completed-sweep";
import { sweepKeptSignals } from "../workflow/signals";
import { WAIT_FOREVER } from "../workflow/wait-entries";

/**
 * jobDeleteFinishedBefore: uses job_finished_idx (state, finished_at), which holds failed, cancelled, superseded and
 * expired jobs (a completed one has no entry: completed-sweep.ts). The statements that delete jobs count what they delete
 * themselves (tallies.ts; no count trigger on delete).
 */
const JOB_DELETE_FINISHED_BEFORE = `
DELETE FROM job WHERE seq IN (
  SELECT seq FROM job WHERE state = ? AND state <> 'completed' AND finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at LIMIT ?)
RETURNING id, own_id, type, state, failure_kind`;

/** The terminal states job_finished_idx holds (the sweep of completed jobs walks the table: completed-sweep.ts). */
const INDEXED_STATES = TERMINAL_STATES.filter((s) => s !== "completed");

/**
 * jobOldestFinishedByState: one seek of job_finished_idx per indexed terminal state, in one statement; the wake-up
 * after every write reads the same columns inside its own statement (scope/wake.ts).
 */
export const RETENTION_WAKE_COLUMNS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    INDEXED_STATES.map((st, i) => [`t${i}`, `(SELECT min(finished_at) FROM job WHERE state = '${st}' AND state <> 'completed' AND finished_at IS NOT NULL)`]),
  ),
  tombstone: "(SELECT min(expires_at) FROM job_tombstone)",
  kept_signal: `(SELECT min(expires_at) FROM job_signal WHERE expires_at < ${WAIT_FOREVER})`,
  completed_kept: "(SELECT coalesce(sum(completed), 0) FROM type_count)",
};
const JOB_OLDEST_FINISHED_BY_STATE = `SELECT ${Object.entries(RETENTION_WAKE_COLUMNS).map(([name, sql]) => `${sql} AS ${name}`).join(", ")}`;

export const SWEEP_BATCH = 1000;

/** retentionMs: how long jobs of the state are kept (superseded and expired ones as long as cancelled); null when they are kept until pruned by hand. */
function retentionMs(store: HomeStore, state: TerminalState): number | null {
  const r = store.config.retention;
  return state === "completed" ? r.completedMs : state === "failed" ? r.failedMs : r.cancelledMs;
}

export function sweepOnce(store: HomeStore, completed: CompletedSweep, now: number, limit = SWEEP_BATCH): { deleted: number; more: boolean } {
  // Every alarm calls this; one read says whether anything passed its retention, where the deletes below are five
  // transactions (they showed in the 64-scope profile: docs/design.md, What each busy object costs).
  const oldest = store.sql.exec<Record<string, number | null>>(JOB_OLDEST_FINISHED_BY_STATE).one();
  const due = sweepAtOf(store, completed, oldest, now);
  if (due === null || due > now) return { deleted: 0, more: false };
  let deleted = 0;
  let more = false;
  for (const state of TERMINAL_STATES) {
    const keep = retentionMs(store, state);
    if (keep === null) continue;
    // Due at finished_at + retention exactly (sweepAtOf), hence the + 1 on a strict "before".
    // Completed jobs are walked only when their own sweep is due (another state's, or a tombstone's, may be).
    if (state === "completed" && (completed.dueAt(completedKept(store, oldest), now, keep) ?? Infinity) > now) continue;
    const out = state === "completed" ? deleteCompleted(store, completed, now - keep + 1, keep, limit, now) : { n: deleteFinished(store, state, now - keep + 1, limit, now), more: false };
    deleted += out.n;
    more ||= out.more || out.n === limit;
  }
  more ||= store.atomic(() => sweepTombstones(store, now, limit)) === limit;
  // Signals kept for a wait that never came (waits.ts).
  if ((oldest.kept_signal ?? Infinity) <= now) more ||= store.atomic(() => sweepKeptSignals(store, now, limit)) === limit;
  if (deleted > 0) store.touched(now);
  return { deleted, more };
}

/**
 * sweepAtOf: when the oldest terminal job of any state passes its retention (null when there are none), from a row holding RETENTION_WAKE_COLUMNS (scope/wake.ts reads them with the rest of a
 * wake-up), and, for completed jobs, what the instance knows (completed-sweep.ts).
 */
export function sweepAtOf(store: HomeStore, completed: CompletedSweep, oldest: Record<string, number | null>, now: number): number | null {
  const keepCompleted = retentionMs(store, "completed");
  let next: number | null = keepCompleted === null ? null : completed.dueAt(completedKept(store, oldest), now, keepCompleted);
  INDEXED_STATES.forEach((state, i) => {
    const t = oldest[`t${i}`] ?? null;
    const keep = retentionMs(store, state);
    if (t !== null && keep !== null) next = Math.min(next ?? Infinity, t + keep);
  });
  const tombstone = oldest.tombstone ?? null;
  if (tombstone !== null) next = Math.min(next ?? Infinity, tombstone);
  const kept = oldest.kept_signal ?? null;
  if (kept !== null) next = Math.min(next ?? Infinity, kept);
  return next;
}

/**
 * completedKept: the completed jobs the counts hold — the count row as the wake statement read it, and what is owed
 * to it (jobs/count-debt.ts): a sweep's deletes owed and unpaid read as jobs still kept, and set a sweep a whole
 * retention later for none (an alarm with nothing to do on an idle object).
 */
function completedKept(store: HomeStore, oldest: Record<string, number | null>): number {
  return (oldest.completed_kept ?? 0) + store.debt.owedTo("completed");
}

/** prune deletes terminal jobs of the given states that finished before `olderThan`. */
export function prune(store: HomeStore, completed: CompletedSweep, olderThan: number, states: readonly TerminalState[], now: number): number {
  let deleted = 0;
  for (const state of states) {
    for (;;) {
      const out = state === "completed" ? deleteCompleted(store, completed, olderThan, null, SWEEP_BATCH, now) : { n: deleteFinished(store, state, olderThan, SWEEP_BATCH, now), more: false };
      deleted += out.n;
      if (!out.more && out.n < SWEEP_BATCH) break;
    }
  }
  if (deleted > 0) store.touched(now);
  return deleted;
}

/**
 * deleteFinished: one bounded delete, counted, and the ids a caller gave kept as tombstones in the same
 * transaction (tombstones.ts). An id the queue made up cannot come back: it leaves none.
 */
function deleteFinished(store: HomeStore, state: TerminalState, before: number, limit: number, now: number): number {
  return store.atomic(() => buryDeleted(store, store.sql.exec<Deleted>(JOB_DELETE_FINISHED_BEFORE, state, before, limit).toArray(), now));
}

/**
 * deleteCompleted: the completed jobs finished before `before` that one walk of the table finds (completed-sweep.ts);
 * `keepMs` null for a prune by hand, which sets no due time.
 */
function deleteCompleted(store: HomeStore, completed: CompletedSweep, before: number, keepMs: number | null, limit: number, now: number): { n: number; more: boolean } {
  // The walk moves the sweep's cursor and due time in memory: a delete rolled back must leave them where they were.
  const kept = completed.snapshot();
  try {
    return store.atomic(() => {
      const { seqs, more } = completed.walk(store.sql, before, keepMs, limit);
      if (seqs.length === 0) return { n: 0, more };
      return { n: buryDeleted(store, store.sql.exec<Deleted>(JOB_DELETE_BY_SEQ, JSON.stringify(seqs)).toArray(), now), more };
    });
  } catch (e) {
    completed.restore(kept);
    throw e;
  }
}

type Deleted = { id: string; own_id: number; type: string; state: string; failure_kind: string | null };

/** buryDeleted: deleted rows counted, and the ids a caller gave kept as tombstones (tombstones.ts); how many. */
function buryDeleted(store: HomeStore, gone: Deleted[], now: number): number {
  tallyDeleted(store, gone, now);
  bury(store, gone.filter((r) => r.own_id === 1).map((r) => r.id), now);
  return gone.length;
}
