/**
 * The per-minute counters per type that a scope object keeps: each type's
 * latest minute in its `type_count` row, the minutes before in `metric_minute`
 * (scope/jobs/tallies.ts, migration `type_count`): the minutes a catalog summary
 * carries, and how long they stay.
 *
 * @module
 */
import { COUNTERS, MINUTE_MS, minuteOf, type MinuteCounters } from "../../metrics/counters";

/** Counters stay this long in a scope object; the catalog has them within seconds. */
export const METRIC_KEEP_MS = 2 * 60 * MINUTE_MS;
/**
 * ...unless the catalog has not had them yet: then they stay until reported,
 * up to this long (below the catalog's 24 h retention, so a minute it dropped
 * is never reported again and counted twice).
 */
export const METRIC_REPORT_MAX_MS = 23 * 60 * MINUTE_MS;

/** metricMinutesSince: primary key (minute, type) range. */
const METRIC_MINUTES_SINCE = `
SELECT minute, type, ${COUNTERS.join(", ")} FROM metric_minute WHERE minute >= ?1
UNION ALL
SELECT minute, type, ${COUNTERS.map((c) => `m_${c}`).join(", ")} FROM type_count WHERE minute >= ?1 AND ${COUNTERS.map((c) => `m_${c}`).join(" + ")} > 0`;
const METRIC_DELETE_BEFORE = "DELETE FROM metric_minute WHERE minute < ?";
/** typeCountMinuteClearBefore: a type idle since a minute past keeping: its row's counters go too (one write, once). */
const TYPE_COUNT_MINUTE_CLEAR_BEFORE = `UPDATE type_count SET ${COUNTERS.map((c) => `m_${c} = 0`).join(", ")} WHERE minute < ? AND ${COUNTERS.map((c) => `m_${c}`).join(" + ")} > 0`;

/**
 * metricsForReport: the minutes a summary must carry — every minute that can
 * have changed since the catalog was last up to date (`unreportedSince`: the first change it may lack), plus the
 * one before it for clock skew between the trigger's time and the reporter's.
 * Unknown (null): the last two minutes.
 */
export function metricsForReport(sql: SqlStorage, unreportedSince: number | null, now: number): MinuteCounters[] {
  // A type's latest minute is in its type_count row, the ones before in metric_minute; one minute is in both only
  // when the row's minute began before the upgrade to type_count: its two parts are summed.
  const out = new Map<string, MinuteCounters>();
  for (const r of sql.exec<MinuteCounters>(METRIC_MINUTES_SINCE, unreportedFrom(unreportedSince, now)).toArray()) {
    const key = `${r.minute}\u0000${r.type}`;
    const held = out.get(key);
    if (held) for (const c of COUNTERS) held[c] += r[c];
    else out.set(key, { ...r });
  }
  return [...out.values()].sort((a, b) => a.minute - b.minute || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/** pruneMetrics: drop minutes past METRIC_KEEP_MS, but never one the catalog may not have yet (within METRIC_REPORT_MAX_MS). */
export function pruneMetrics(sql: SqlStorage, now: number, unreportedSince: number | null): void {
  const before = Math.min(now - METRIC_KEEP_MS, unreportedFrom(unreportedSince, now));
  sql.exec(METRIC_DELETE_BEFORE, before);
  sql.exec(TYPE_COUNT_MINUTE_CLEAR_BEFORE, before);
}

function unreportedFrom(unreportedSince: number | null, now: number): number {
  return minuteOf(Math.max(unreportedSince ?? now, now - METRIC_REPORT_MAX_MS)) - MINUTE_MS;
}
