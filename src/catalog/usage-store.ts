/**
 * The catalog's roll-up of what the queue's objects are billed for
 * (metering/usage.ts; docs/operating.md "What the meters count"). Each object
 * reports everything its instance used since it began (a scope object with
 * each summary, the others when they fall idle, at most every 5 s); `take`
 * adds what grew since that instance's last report to the totals and to the
 * minute, in the transaction of the call that brought it — nothing is held in
 * memory, so a total only grows, and every answer reads only what is written.
 * A report sent twice, or again after a lost answer, adds nothing more; a
 * report older than the one taken (a smaller total) adds nothing.
 *
 * What a report adds is held in memory (UsageBook) and written by the
 * shard's alarm, within CATALOG_USAGE_AFTER_MS: one row per sender and one per
 * kind and minute for all the reports since the last write, where each report
 * wrote its sender's row and its minute's (1,726 rows of a small team's hour:
 * docs/design.md "A small team's day"). Held, not lost: a report carries its
 * instance's whole total, so a shard instance that dies with reports unwritten
 * takes their growth again from each sender's next report, against the row
 * last written; only a sender whose instance also ended since loses its last
 * few seconds, and a quiet sender's comes back at its next activity, counted
 * in that minute (docs/operating.md "What the meters count"). The totals are
 * `object_usage` — the minutes already dropped, added there as they are
 * dropped — plus the minutes kept; a read counts only what is written, so a
 * total read twice never falls.
 *
 * @module
 */
import { minuteOf } from "../metrics/counters";
import { METRIC_RETENTION_MS } from "./metrics-store";
import { addUsage, isObjectKind, isZeroUsage, OBJECT_KINDS, USAGE_FIELDS, zeroUsage, type KindUsage, type MinuteUsage, type ObjectKind, type Usage, type UsageReport } from "../metering/usage";

/** A sender no report renewed for this long is forgotten (its instance was evicted long since). */
export const USAGE_SENDER_KEEP_MS = 24 * 3600_000;

const COLS = "rows_written, rows_read, requests, active_ms, setup_rows_written, setup_rows_read";
const PLUS =
  "rows_written = rows_written + excluded.rows_written, rows_read = rows_read + excluded.rows_read, requests = requests + excluded.requests, " +
  "active_ms = active_ms + excluded.active_ms, setup_rows_written = setup_rows_written + excluded.setup_rows_written, setup_rows_read = setup_rows_read + excluded.setup_rows_read";
const AS = "rows_written AS rowsWritten, rows_read AS rowsRead, requests, active_ms AS activeMs, setup_rows_written AS setupRowsWritten, setup_rows_read AS setupRowsRead";
/** totalFold: the minutes about to be dropped, added to the totals' base (migration `home_type_next_partial`). */
const TOTAL_FOLD = `
INSERT INTO object_usage (object, ${COLS})
SELECT object, ${COLS.split(", ").map((c) => `sum(${c})`).join(", ")} FROM usage_minute WHERE minute < ? GROUP BY object
ON CONFLICT (object) DO UPDATE SET ${PLUS}`;
/** minuteSums: what the kept minutes add to the base, per kind. */
const MINUTE_SUMS = `SELECT object, ${COLS.split(", ").map((c) => `sum(${c}) AS ${c}`).join(", ")} FROM usage_minute GROUP BY object`;
const MINUTE_ADD = `INSERT INTO usage_minute (minute, object, ${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (minute, object) DO UPDATE SET ${PLUS}`;
const MINUTE_DELETE_BEFORE = "DELETE FROM usage_minute WHERE minute < ?";
const SENDER_GET = `SELECT instance, ${AS} FROM usage_sender WHERE name = ?`;
const SENDER_PUT = `
INSERT INTO usage_sender (name, object, instance, at, ${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET object = excluded.object, instance = excluded.instance, at = excluded.at, rows_written = excluded.rows_written,
  rows_read = excluded.rows_read, requests = excluded.requests, active_ms = excluded.active_ms, setup_rows_written = excluded.setup_rows_written,
  setup_rows_read = excluded.setup_rows_read`;
const SENDERS_DROP = "DELETE FROM usage_sender WHERE at < ?";
const TOTALS = `SELECT object, ${AS} FROM object_usage`;
/** usageMinutesFrom: primary key range (minute first). */
const MINUTES_FROM = `SELECT minute, object, ${AS} FROM usage_minute WHERE minute >= ? ORDER BY minute, object`;

const values = (u: Usage) => USAGE_FIELDS.map((f) => Math.round(u[f]));

type Sender = { kind: ObjectKind; instance: string; at: number; total: Usage };

/** Stale senders and old usage minutes are dropped at most this often. */
const DROP_STALE_EVERY_MS = 3600_000;
/** Senders whose reports are held before the alarm: past it, they are written at once. */
const USAGE_HELD_MAX = 1_000;

/**
 * UsageBook: the reports taken since the last write — each sender's latest, and what they added per kind and
 * minute — held in memory until `write` (the shard's alarm).
 */
export class UsageBook {
  private droppedAt = -Infinity;
  private readonly senders = new Map<string, Sender>();
  private readonly minutes = new Map<string, { minute: number; kind: ObjectKind; grew: Usage }>();

  /**
   * take: a sender's report: what grew since its instance's last report taken (held here, else as written) is
   * added to this minute's; answers what was added (nothing for a report taken before).
   */
  take(sql: SqlStorage, report: UsageReport, now: number): Usage {
    if (!isObjectKind(report.kind)) return zeroUsage();
    const mine = this.senders.get(report.name);
    const held = mine
      ? { ...mine.total, instance: mine.instance }
      : (sql.exec<Record<string, number> & { instance: string }>(SENDER_GET, report.name).toArray()[0] as (Usage & { instance: string }) | undefined);
    const grew = zeroUsage();
    let newer = false;
    for (const f of USAGE_FIELDS) {
      const before = held && held.instance === report.instance ? held[f] : 0;
      grew[f] = Math.max(0, report.total[f] - before);
      if (report.total[f] > before) newer = true;
    }
    // An older report of the same instance (overtaken by a later one) changes nothing, not even the row.
    if (!newer && held?.instance === report.instance) return grew;
    this.senders.set(report.name, { kind: report.kind, instance: report.instance, at: now, total: { ...report.total } });
    if (!isZeroUsage(grew)) {
      const minute = minuteOf(now);
      const key = `${minute}\u0000${report.kind}`;
      const m = this.minutes.get(key);
      if (m) addUsage(m.grew, grew);
      else this.minutes.set(key, { minute, kind: report.kind, grew: { ...grew } });
    }
    return grew;
  }

  /**
   * hold: `take`, written at once (`commit`) when USAGE_HELD_MAX senders are held, so memory stays small. A write that
   * fails keeps them held for the alarm: it never fails the report (its summary committed already).
   */
  hold(storage: DurableObjectStorage, report: UsageReport, now: number): void {
    this.take(storage.sql, report, now);
    if (this.senders.size < USAGE_HELD_MAX) return;
    try {
      this.commit(storage, now);
    } catch (e) {
      console.error(JSON.stringify({ event: "catalog:usage_write_failed", held: this.senders.size, error: String(e) }));
    }
  }

  /** write: what is held, in the caller's transaction — a row per sender and one per kind and minute. */
  write(sql: SqlStorage): void {
    for (const [name, s] of this.senders) sql.exec(SENDER_PUT, name, s.kind, s.instance, s.at, ...values(s.total));
    for (const m of this.minutes.values()) sql.exec(MINUTE_ADD, m.minute, m.kind, ...values(m.grew));
  }

  /** commit: what is held written in one transaction, then let go; now and then, stale senders and old minutes dropped with it. */
  commit(storage: DurableObjectStorage, now: number): void {
    storage.transactionSync(() => {
      this.write(storage.sql);
      if (now - this.droppedAt >= DROP_STALE_EVERY_MS) {
        dropStale(storage.sql, now);
        this.droppedAt = now;
      }
    });
    this.senders.clear();
    this.minutes.clear();
  }
}

/** dropStale: forget senders no report renewed for a day, and usage minutes past the series' retention. */
export function dropStale(sql: SqlStorage, now: number): void {
  sql.exec(SENDERS_DROP, now - USAGE_SENDER_KEEP_MS);
  // Dropped minutes stay in the totals: added to their base first (in the caller's transaction).
  sql.exec(TOTAL_FOLD, now - METRIC_RETENTION_MS);
  sql.exec(MINUTE_DELETE_BEFORE, now - METRIC_RETENTION_MS);
}

/** usageTotals: every kind's usage since the catalog began, as written. */
export function usageTotals(sql: SqlStorage): KindUsage[] {
  const byKind = new Map<ObjectKind, KindUsage>(OBJECT_KINDS.map((k) => [k, { object: k, ...zeroUsage() }]));
  for (const r of sql.exec(TOTALS).toArray() as unknown as KindUsage[]) if (isObjectKind(r.object)) addUsage(byKind.get(r.object)!, r);
  for (const r of sql.exec(MINUTE_SUMS).toArray() as unknown as Record<string, number | string>[]) {
    if (!isObjectKind(r.object as string)) continue;
    const u = zeroUsage();
    for (const [f, c] of USAGE_FIELDS.map((f, i) => [f, COLS.split(", ")[i]!] as const)) u[f] = Number(r[c] ?? 0);
    addUsage(byKind.get(r.object as ObjectKind)!, u);
  }
  return [...byKind.values()];
}

/** usageMinutes: each kind's usage per minute from `from` on, as written. */
export function usageMinutes(sql: SqlStorage, from: number): MinuteUsage[] {
  return (sql.exec(MINUTES_FROM, from).toArray() as unknown as MinuteUsage[]).filter((r) => isObjectKind(r.object));
}
