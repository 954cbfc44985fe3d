/**
 * The per-minute counters per type that a scope object keeps (migration
 * `job_history_triggers`, and enqueue for `enqueued`): the minutes a catalog
 * summary carries, and how long they stay.
 *
 * @module
 */
import { COUNTERS, MINUTE_MS, minuteOf, type MinuteCounters } from "../metrics/counters";

/** Counters stay this long in a scope object; the catalog has them within seconds. */
export const METRIC_KEEP_MS = 2 * 60 * MINUTE_MS;
/**
 * ...unless the catalog has not had them yet: then they stay until reported,
 * up to this long (below the catalog's 24 h retention, so a minute it dropped
 * is never reported again and counted twice).
 */
export const METRIC_REPORT_MAX_MS = 23 * 60 * MINUTE_MS;

/** metricMinutesSince: primary key (minute, type) range. */
const METRIC_MINUTES_SINCE = `SELECT minute, type, ${COUNTERS.join(", ")} FROM metric_minute WHERE minute >= ? ORDER BY minute, type`;
const METRIC_DELETE_BEFORE = "DELETE FROM metric_minute WHERE minute < ?";

/**
 * metricsForReport: the minutes a summary must carry — every minute that can
 * have changed since the catalog was last up to date (`unreportedSince`: the first change it may lack), plus the
 * one before it for clock skew between the trigger's time and the reporter's.
 * Unknown (null): the last two minutes.
 */
export function metricsForReport(sql: SqlStorage, unreportedSince: number | null, now: number): MinuteCounters[] {
  return sql.exec<MinuteCounters>(METRIC_MINUTES_SINCE, unreportedFrom(unreportedSince, now)).toArray();
}

/** pruneMetrics: drop minutes past METRIC_KEEP_MS, but never one the catalog may not have yet (within METRIC_REPORT_MAX_MS). */
export function pruneMetrics(sql: SqlStorage, now: number, unreportedSince: number | null): void {
  sql.exec(METRIC_DELETE_BEFORE, Math.min(now - METRIC_KEEP_MS, unreportedFrom(unreportedSince, now)));
}

function unreportedFrom(unreportedSince: number | null, now: number): number {
  return minuteOf(Math.max(unreportedSince ?? now, now - METRIC_REPORT_MAX_MS)) - MINUTE_MS;
}
