/**
 * What the triggers of migration `job_history_triggers` record in a scope
 * object: each job's timeline, and per-minute counters per type. Reads for
 * the job page and the catalog summary, and the retention of the counters.
 *
 * @module
 */
import { MINUTE_MS, minuteOf, type MinuteCounters } from "../metrics/counters";

/** Counters stay this long in a scope object; the catalog has them within seconds. */
export const METRIC_KEEP_MS = 2 * 60 * MINUTE_MS;

export type TransitionRow = {
  at: number;
  state: string;
  attempt: number;
  note: string | null;
};

/** jobTransitionsById: job_id_idx, then job_transition_job_idx in step order. */
const JOB_TRANSITIONS = `
SELECT t.at AS at, t.state AS state, t.attempt AS attempt, t.note AS note
  FROM job_transition t JOIN job j ON j.seq = t.job_seq
 WHERE j.id = ?
 ORDER BY t.id`;

/** metricMinutesSince: primary key (minute, type) range. */
const METRIC_MINUTES_SINCE = `
SELECT minute, type, enqueued, started, completed, failed, retried, cancelled FROM metric_minute WHERE minute >= ? ORDER BY minute, type`;
const METRIC_DELETE_BEFORE = "DELETE FROM metric_minute WHERE minute < ?";

export function jobTimeline(sql: SqlStorage, id: string): TransitionRow[] {
  return sql.exec<TransitionRow>(JOB_TRANSITIONS, id).toArray();
}

/**
 * metricsForReport: the minutes a summary must carry — every minute that can
 * have changed since the catalog was last up to date (`dirtySince`), plus the
 * one before it for clock skew between the trigger's time and the reporter's.
 * Unknown (null): the last two minutes.
 */
export function metricsForReport(sql: SqlStorage, dirtySince: number | null, now: number): MinuteCounters[] {
  const from = minuteOf(Math.max(dirtySince ?? now, now - METRIC_KEEP_MS)) - MINUTE_MS;
  return sql.exec<MinuteCounters>(METRIC_MINUTES_SINCE, from).toArray();
}

export function pruneMetrics(sql: SqlStorage, now: number): void {
  sql.exec(METRIC_DELETE_BEFORE, now - METRIC_KEEP_MS);
}
