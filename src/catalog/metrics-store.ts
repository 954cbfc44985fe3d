/**
 * The catalog's roll-up of the scope objects' per-minute counters: each home's
 * minutes as last reported, their sum per minute (the queue-wide series), and
 * totals since the catalog began (kept by trigger, migration
 * `metric_total_triggers`).
 *
 * @module
 */
import { COUNTERS, MINUTE_MS, type Counters, type MinuteCounters } from "../metrics/counters";

/** Per-minute rows older than this are dropped; totals keep counting. */
export const METRIC_RETENTION_MS = 24 * 60 * MINUTE_MS;

const cols = COUNTERS.join(", ");

/**
 * metricUpsert: a home's counters only grow, so the newer of the held and the
 * reported value wins — a summary replayed or overtaken changes nothing, and
 * the totals trigger adds exactly the growth.
 */
const METRIC_UPSERT = `
INSERT INTO metric (home, type, minute, ${cols}) VALUES (?, ?, ?, ${COUNTERS.map(() => "?").join(", ")})
ON CONFLICT (home, type, minute) DO UPDATE SET ${COUNTERS.map((c) => `${c} = max(${c}, excluded.${c})`).join(", ")}`;

/** metricDeleteBefore: metric_minute_idx. */
const METRIC_DELETE_BEFORE = "DELETE FROM metric WHERE minute < ?";

/** metricSeries: metric_minute_idx range, summed over homes. */
const METRIC_SERIES = `
SELECT minute, type, ${COUNTERS.map((c) => `sum(${c}) AS ${c}`).join(", ")}
  FROM metric WHERE minute >= ?1 AND (?2 IS NULL OR type = ?2)
 GROUP BY minute, type ORDER BY minute, type`;

const METRIC_TOTALS = `SELECT type, ${cols} FROM metric_total ORDER BY type`;

export function applyMetrics(sql: SqlStorage, home: string, rows: readonly MinuteCounters[], now: number): void {
  const cutoff = now - METRIC_RETENTION_MS;
  // A row older than the retention was (or will be) dropped here: taking it again would count it twice in the totals.
  for (const r of rows) if (r.minute >= cutoff) sql.exec(METRIC_UPSERT, home, r.type, r.minute, ...COUNTERS.map((c) => r[c]));
  sql.exec(METRIC_DELETE_BEFORE, cutoff);
}

export function metricSeries(sql: SqlStorage, from: number, type: string | null): MinuteCounters[] {
  return sql.exec<MinuteCounters>(METRIC_SERIES, from, type).toArray();
}

export function metricTotals(sql: SqlStorage): (Counters & { type: string })[] {
  return sql.exec<Counters & { type: string }>(METRIC_TOTALS).toArray();
}
