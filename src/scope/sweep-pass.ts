/**
 * The retention sweep: terminal jobs older than their state's retention are
 * deleted, a bounded batch per run. Also `prune`, the same delete on demand.
 *
 * @module
 */
import { TERMINAL_STATES, type TerminalState } from "../job/states";
import type { HomeStore } from "./home-store";
import { bury, sweepTombstones } from "./tombstones";
import { tallyDeleted } from "./tallies";

/**
 * jobDeleteFinishedBefore: uses job_finished_idx (state, finished_at). The only statement that deletes jobs:
 * it counts what it deletes itself (tallies.ts; no count trigger on delete).
 */
const JOB_DELETE_FINISHED_BEFORE = `
DELETE FROM job WHERE seq IN (
  SELECT seq FROM job WHERE state = ? AND finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at LIMIT ?)
RETURNING id, own_id, type, state, failure_kind`;

/**
 * jobOldestFinishedByState: one seek of job_finished_idx per terminal state, in one statement; the wake-up
 * after every write reads the same columns inside its own statement (scope/wake.ts).
 */
export const OLDEST_FINISHED_COLUMNS = `${TERMINAL_STATES.map(
  (st, i) => `(SELECT min(finished_at) FROM job WHERE state = '${st}' AND finished_at IS NOT NULL) AS t${i}`,
).join(", ")}, (SELECT min(expires_at) FROM job_tombstone) AS tombstone`;
const JOB_OLDEST_FINISHED_BY_STATE = `SELECT ${OLDEST_FINISHED_COLUMNS}`;

export const SWEEP_BATCH = 1000;

/** retentionMs: how long jobs of the state are kept (superseded ones as long as cancelled); null when they are kept until pruned by hand. */
function retentionMs(store: HomeStore, state: TerminalState): number | null {
  const r = store.config.retention;
  return state === "completed" ? r.completedMs : state === "failed" ? r.failedMs : r.cancelledMs;
}

export function sweepOnce(store: HomeStore, now: number, limit = SWEEP_BATCH): { deleted: number; more: boolean } {
  // Every alarm calls this; one read says whether anything passed its retention, where the deletes below are five
  // transactions (they showed in the 64-scope profile: docs/design.md, What each busy object costs).
  const due = nextSweepAt(store);
  if (due === null || due > now) return { deleted: 0, more: false };
  let deleted = 0;
  let more = false;
  for (const state of TERMINAL_STATES) {
    const keep = retentionMs(store, state);
    if (keep === null) continue;
    // Due at finished_at + retention exactly (nextSweepAt), hence the + 1 on a strict "before".
    const n = deleteFinished(store, state, now - keep + 1, limit, now);
    deleted += n;
    more ||= n === limit;
  }
  more ||= store.atomic(() => sweepTombstones(store, now, limit)) === limit;
  if (deleted > 0) store.touched(now);
  return { deleted, more };
}

/** nextSweepAt: when the oldest terminal job of any state passes its retention; null when there are none. */
function nextSweepAt(store: HomeStore): number | null {
  return sweepAtOf(store, store.sql.exec<Record<string, number | null>>(JOB_OLDEST_FINISHED_BY_STATE).one());
}

/** sweepAtOf: nextSweepAt from a row holding OLDEST_FINISHED_COLUMNS (scope/wake.ts reads them with the rest of a wake-up). */
export function sweepAtOf(store: HomeStore, oldest: Record<string, number | null>): number | null {
  let next: number | null = null;
  TERMINAL_STATES.forEach((state, i) => {
    const t = oldest[`t${i}`] ?? null;
    const keep = retentionMs(store, state);
    if (t !== null && keep !== null) next = Math.min(next ?? Infinity, t + keep);
  });
  const tombstone = oldest.tombstone ?? null;
  if (tombstone !== null) next = Math.min(next ?? Infinity, tombstone);
  return next;
}

/** prune deletes terminal jobs of the given states that finished before `olderThan`. */
export function prune(store: HomeStore, olderThan: number, states: readonly TerminalState[], now: number): number {
  let deleted = 0;
  for (const state of states) {
    for (;;) {
      const n = deleteFinished(store, state, olderThan, SWEEP_BATCH, now);
      deleted += n;
      if (n < SWEEP_BATCH) break;
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
  return store.atomic(() => {
    const gone = store.sql
      .exec<{ id: string; own_id: number; type: string; state: string; failure_kind: string | null }>(JOB_DELETE_FINISHED_BEFORE, state, before, limit)
      .toArray();
    tallyDeleted(store.sql, gone, now);
    bury(store, gone.filter((r) => r.own_id === 1).map((r) => r.id), now);
    return gone.length;
  });
}
