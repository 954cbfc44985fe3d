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
/**
 * ...unless the catalog has not had them yet: then they stay until reported,
 * up to this long (below the catalog's 24 h retention, so a minute it dropped
 * is never reported again and counted twice).
 */
export const METRIC_REPORT_MAX_MS = 23 * 60 * MINUTE_MS;

export type TransitionRow = {
  at: number;
  state: string;
  attempt: number;
  note: string | null;
};

/**
 * jobTimelineById: the newest `?2` steps, oldest first — job_id_idx, then
 * job_transition_job_idx backwards (a job snoozed for a week has thousands).
 * The first step, creation, is the job row's own (no row is written for it).
 */
const JOB_TIMELINE = `
SELECT at, state, attempt, note FROM (
  SELECT k, at, state, attempt, note FROM (
    SELECT 0 AS k, created_at AS at, 'pending' AS state, 0 AS attempt, NULL AS note FROM job WHERE id = ?1
    UNION ALL
    SELECT t.id AS k, t.at, t.state, t.attempt, t.note FROM job_transition t JOIN job j ON j.seq = t.job_seq WHERE j.id = ?1)
  ORDER BY k DESC LIMIT ?2)
ORDER BY k`;
/** jobTransitionCount: job_transition_job_idx; plus one for creation. */
const JOB_STEP_COUNT = "SELECT count(*) + 1 AS n FROM job_transition t JOIN job j ON j.seq = t.job_seq WHERE j.id = ?";

/** metricMinutesSince: primary key (minute, type) range. */
const METRIC_MINUTES_SINCE = `
SELECT minute, type, enqueued, started, completed, failed, retried, cancelled FROM metric_minute WHERE minute >= ? ORDER BY minute, type`;
const METRIC_DELETE_BEFORE = "DELETE FROM metric_minute WHERE minute < ?";

/** jobTimeline: the job's newest `limit` steps, oldest first, and how many earlier ones were left out; null when there is no such job. */
export function jobTimeline(sql: SqlStorage, id: string, limit: number): { steps: TransitionRow[]; earlier: number } | null {
  const steps = sql.exec<TransitionRow>(JOB_TIMELINE, id, limit).toArray();
  if (steps.length === 0) return null;
  const earlier = steps.length < limit ? 0 : sql.exec<{ n: number }>(JOB_STEP_COUNT, id).one().n - steps.length;
  return { steps, earlier };
}

/**
 * metricsForReport: the minutes a summary must carry — every minute that can
 * have changed since the catalog was last up to date (`dirtySince`), plus the
 * one before it for clock skew between the trigger's time and the reporter's.
 * Unknown (null): the last two minutes.
 */
export function metricsForReport(sql: SqlStorage, dirtySince: number | null, now: number): MinuteCounters[] {
  return sql.exec<MinuteCounters>(METRIC_MINUTES_SINCE, unreportedFrom(dirtySince, now)).toArray();
}

/** pruneMetrics: drop minutes past METRIC_KEEP_MS, but never one the catalog may not have yet (within METRIC_REPORT_MAX_MS). */
export function pruneMetrics(sql: SqlStorage, now: number, dirtySince: number | null): void {
  sql.exec(METRIC_DELETE_BEFORE, Math.min(now - METRIC_KEEP_MS, unreportedFrom(dirtySince, now)));
}

function unreportedFrom(dirtySince: number | null, now: number): number {
  return minuteOf(Math.max(dirtySince ?? now, now - METRIC_REPORT_MAX_MS)) - MINUTE_MS;
}
