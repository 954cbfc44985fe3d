/**
 * The catalog's roll-up of the scope objects' per-minute counters: each home's
 * minutes as last reported; and, kept by trigger from their growth (migrations
 * `metric_growth_triggers`, `metric_total_base`), the queue-wide series per
 * (type, minute) — and the totals since the catalog began, its minutes plus
 * those already dropped.
 *
 * @module
 */
import { COUNTERS, MINUTE_MS, type Counters, type MinuteCounters } from "../metrics/counters";

/**
 * Per-minute rows older than this are dropped; totals keep counting. Longer
 * than a scope object ever re-reports a minute (scope/report/minute-counters.ts METRIC_REPORT_MAX_MS),
 * so a dropped row is never taken again and counted twice.
 */
export const METRIC_RETENTION_MS = 24 * 60 * MINUTE_MS;

const cols = COUNTERS.join(", ");

/**
 * metricUpsert: a home's counters only grow, so the larger of the held and the
 * reported value wins — a summary replayed or overtaken changes nothing, and
 * the triggers add exactly the growth. A report that raises nothing updates
 * nothing (the WHERE), so it fires no trigger either.
 */
const METRIC_UPSERT = `
INSERT INTO metric (home, type, minute, ${cols}) VALUES (?, ?, ?, ${COUNTERS.map(() => "?").join(", ")})
ON CONFLICT (minute, home, type) DO UPDATE SET ${COUNTERS.map((c) => `${c} = max(${c}, excluded.${c})`).join(", ")}
 WHERE ${COUNTERS.map((c) => `excluded.${c} > ${c}`).join(" OR ")}`;

/** metricDeleteBefore / metricSeriesDeleteBefore: their primary keys' ranges (minute first). */
const METRIC_DELETE_BEFORE = "DELETE FROM metric WHERE minute < ?";
const METRIC_SERIES_DELETE_BEFORE = "DELETE FROM metric_series WHERE minute < ?";

/** metricSeries: primary key range (minute, type): types × minutes rows, whatever the number of homes. */
const METRIC_SERIES = `
SELECT minute, type, ${cols} FROM metric_series WHERE minute >= ?1 AND (?2 IS NULL OR type = ?2) ORDER BY minute, type`;

/**
 * metricTotals: the totals since the catalog began are the series' minutes kept plus `metric_total`, the minutes
 * dropped (metricSeriesFold adds them there as they go): a summary's growth writes its series row alone, where the
 * growth trigger wrote the total's row too (migration `metric_total_base`).
 */
const METRIC_TOTALS = `
SELECT type, ${COUNTERS.map((c) => `sum(${c}) AS ${c}`).join(", ")} FROM (
  SELECT type, ${cols} FROM metric_total WHERE ?1 IS NULL OR type = ?1
  UNION ALL
  SELECT type, ${cols} FROM metric_series WHERE ?1 IS NULL OR type = ?1)
GROUP BY type ORDER BY type`;
/** metricSeriesFold: the series' minutes about to be dropped, added to the totals' base. */
const METRIC_SERIES_FOLD = `
INSERT INTO metric_total (type, ${cols})
SELECT type, ${COUNTERS.map((c) => `sum(${c})`).join(", ")} FROM metric_series WHERE minute < ? GROUP BY type
ON CONFLICT (type) DO UPDATE SET ${COUNTERS.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}`;

export function applyMetrics(sql: SqlStorage, home: string, rows: readonly MinuteCounters[], now: number): void {
  const cutoff = now - METRIC_RETENTION_MS;
  // A row older than the retention was (or will be) dropped here: taking it again would count it twice in the totals.
  for (const r of rows) if (r.minute >= cutoff) sql.exec(METRIC_UPSERT, home, r.type, r.minute, ...COUNTERS.map((c) => r[c]));
  sql.exec(METRIC_DELETE_BEFORE, cutoff);
  // Dropped minutes stay in the totals: added to their base first.
  sql.exec(METRIC_SERIES_FOLD, cutoff);
  sql.exec(METRIC_SERIES_DELETE_BEFORE, cutoff);
}

export function metricSeries(sql: SqlStorage, from: number, type: string | null): MinuteCounters[] {
  return sql.exec<MinuteCounters>(METRIC_SERIES, from, type).toArray();
}

export function metricTotals(sql: SqlStorage, type: string | null): (Counters & { type: string })[] {
  return sql.exec<Counters & { type: string }>(METRIC_TOTALS, type).toArray();
}
