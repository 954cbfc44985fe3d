/**
 * The catalog's roll-up of what the queue's objects are billed for
 * (metering/usage.ts): scope objects send their meter's unsent usage with
 * each summary, the other objects at most every USAGE_SEND_EVERY_MS
 * (metering/usage-sender.ts). It is gathered here in memory and written at
 * most once per USAGE_FLUSH_MS by the catalog's alarm — one row per object kind
 * in the totals and one in the minute — so counting the cost adds almost
 * none. Reads add what is still in memory, so nothing reported is missing
 * from an answer; an evicted catalog loses what it had not written yet.
 *
 * @module
 */
import { minuteOf } from "../metrics/counters";
import { METRIC_RETENTION_MS } from "./metrics-store";
import { addUsage, isObjectKind, OBJECT_KINDS, zeroUsage, type KindUsage, type MinuteUsage, type ObjectKind, type Usage } from "../metering/usage";

export const USAGE_FLUSH_MS = 10_000;

const COLS = "rows_written, rows_read, requests, active_ms";
const PLUS = "rows_written = rows_written + excluded.rows_written, rows_read = rows_read + excluded.rows_read, requests = requests + excluded.requests, active_ms = active_ms + excluded.active_ms";
const TOTAL_ADD = `INSERT INTO object_usage (object, ${COLS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT (object) DO UPDATE SET ${PLUS}`;
const MINUTE_ADD = `INSERT INTO usage_minute (minute, object, ${COLS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (minute, object) DO UPDATE SET ${PLUS}`;
const MINUTE_DELETE_BEFORE = "DELETE FROM usage_minute WHERE minute < ?";
const TOTALS = `SELECT object, rows_written AS rowsWritten, rows_read AS rowsRead, requests, active_ms AS activeMs FROM object_usage`;
/** usageMinutesFrom: primary key range (minute first). */
const MINUTES_FROM = `SELECT minute, object, rows_written AS rowsWritten, rows_read AS rowsRead, requests, active_ms AS activeMs FROM usage_minute WHERE minute >= ? ORDER BY minute, object`;

/** UsageBuffer: usage reported and not yet written, by minute and kind. */
export class UsageBuffer {
  private readonly held = new Map<string, MinuteUsage>();

  add(kind: ObjectKind, u: Usage, now: number): void {
    const minute = minuteOf(now);
    const key = `${minute}/${kind}`;
    const entry = this.held.get(key) ?? { minute, object: kind, ...zeroUsage() };
    this.held.set(key, addUsage(entry, u) as MinuteUsage);
  }

  empty(): boolean {
    return this.held.size === 0;
  }

  entries(): MinuteUsage[] {
    return [...this.held.values()];
  }

  /** flush: write what is held (in the caller's transaction); the buffer is empty after. */
  flush(sql: SqlStorage, now: number): void {
    for (const u of this.held.values()) {
      sql.exec(TOTAL_ADD, u.object, u.rowsWritten, u.rowsRead, u.requests, u.activeMs);
      if (u.minute >= now - METRIC_RETENTION_MS) sql.exec(MINUTE_ADD, u.minute, u.object, u.rowsWritten, u.rowsRead, u.requests, u.activeMs);
    }
    this.held.clear();
    sql.exec(MINUTE_DELETE_BEFORE, now - METRIC_RETENTION_MS);
  }
}

/** usageTotals: every kind's usage since the catalog began, what is held in memory included. */
export function usageTotals(sql: SqlStorage, held: UsageBuffer): KindUsage[] {
  const byKind = new Map<ObjectKind, KindUsage>(OBJECT_KINDS.map((k) => [k, { object: k, ...zeroUsage() }]));
  for (const r of (sql.exec(TOTALS).toArray() as unknown as KindUsage[])) if (isObjectKind(r.object)) addUsage(byKind.get(r.object)!, r);
  for (const u of held.entries()) addUsage(byKind.get(u.object)!, u);
  return [...byKind.values()];
}

/** usageMinutes: each kind's usage per minute from `from` on, what is held in memory included. */
export function usageMinutes(sql: SqlStorage, held: UsageBuffer, from: number): MinuteUsage[] {
  const out = new Map<string, MinuteUsage>();
  const put = (u: MinuteUsage) => {
    const key = `${u.minute}/${u.object}`;
    const kept = out.get(key);
    if (kept) addUsage(kept, u);
    else out.set(key, { ...u });
  };
  for (const r of (sql.exec(MINUTES_FROM, from).toArray() as unknown as MinuteUsage[])) if (isObjectKind(r.object)) put(r);
  for (const u of held.entries()) if (u.minute >= from) put(u);
  return [...out.values()].sort((a, b) => a.minute - b.minute || a.object.localeCompare(b.object));
}


