/**
 * Counting a type's jobs in its `type_count` row (src/tables/scope.ts): its
 * live counts per state, and the counters of its latest minute, together in
 * one row, so a move writes one row. Triggers count every statement that does
 * not count its own (migration `type_count`); the statements that move many
 * jobs at once — the enqueue's insert, a claim, a completion, the retention
 * sweep — bump each row's `tally` (which the triggers skip) and count here,
 * once per type for all their rows: a 100-job claim writes one count row, not
 * 100. Called in the statement's transaction, with the rows it returned, so
 * counts never drift from rows.
 *
 * @module
 */
import { COUNTERS, minuteOf, type CounterName } from "../../metrics/counters";
import { FAILURE_KINDS } from "../../job/states";
import type { HomeStore } from "./home-store";

/** type_count's count columns, one per state (failed per kind). */
export const STATE_COLUMNS = ["pending", "running", "waiting", "completed", "cancelled", "superseded", "expired", ...FAILURE_KINDS.map((k) => `failed_${k}` as const)] as const;
export type StateColumn = (typeof STATE_COLUMNS)[number];

/** stateColumn: the column that counts jobs in `state` (of `kind`, when failed). */
export function stateColumn(state: string, kind: string | null): StateColumn {
  return (state === "failed" ? `failed_${kind}` : state) as StateColumn;
}

const ENSURE = "INSERT INTO type_count (type) VALUES (?) ON CONFLICT (type) DO NOTHING";
const CTR = COUNTERS.join(", ");
const ADD_COUNTERS = COUNTERS.map((c) => `${c} = ${c} + excluded.${c}`).join(", ");
/** typeCountRoll: the row's minute is over (before ?2): its counters go to metric_minute. Writes only then. */
const ROLL = `
INSERT INTO metric_minute (minute, type, ${CTR})
SELECT minute, type, ${COUNTERS.map((c) => `m_${c}`).join(", ")} FROM type_count
 WHERE type = ?1 AND minute < ?2 AND ${COUNTERS.map((c) => `m_${c}`).join(" + ")} > 0
ON CONFLICT (minute, type) DO UPDATE SET ${ADD_COUNTERS}`;
/** typeCountLate: a move in a minute before the row's (a clock that went back) is counted in that minute's metric_minute row. */
const LATE = `
INSERT INTO metric_minute (minute, type, ${CTR})
SELECT ?2, ?1, ${COUNTERS.map((_, i) => `?${i + 3}`).join(", ")} FROM type_count WHERE type = ?1 AND minute > ?2
ON CONFLICT (minute, type) DO UPDATE SET ${ADD_COUNTERS}`;
const BUMP = `
UPDATE type_count SET
  ${STATE_COLUMNS.map((c, i) => `${c} = ${c} + ?${i + 3}`).join(", ")},
  ${COUNTERS.map((c, i) => `m_${c} = CASE WHEN minute < ?2 THEN 0 ELSE m_${c} END + CASE WHEN minute <= ?2 THEN ?${STATE_COLUMNS.length + 3 + i} ELSE 0 END`).join(",\n  ")},
  minute = max(minute, ?2)
 WHERE type = ?1`;

/** bump: one type's counts move by `deltas` and its counters of `now`'s minute grow by `counters`: one row written. */
function bump(sql: SqlStorage, type: string, now: number, deltas: Partial<Record<StateColumn, number>>, counters: Partial<Record<CounterName, number>>): void {
  const minute = minuteOf(now);
  const ctr = COUNTERS.map((c) => counters[c] ?? 0);
  sql.exec(ROLL, type, minute);
  if (ctr.some((n) => n !== 0)) sql.exec(LATE, type, minute, ...ctr);
  sql.exec(BUMP, type, minute, ...STATE_COLUMNS.map((c) => deltas[c] ?? 0), ...ctr);
}

function byType<R extends { readonly type: string }>(rows: readonly R[]): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) {
    const list = out.get(r.type);
    if (list) list.push(r);
    else out.set(r.type, [r]);
  }
  return out;
}

/**
 * count: one type's moves — written now when they change its `pending` count or the type runs one at a time, owed
 * otherwise (count-debt.ts: written with the next read of the counts).
 */
function count(store: HomeStore, type: string, now: number, deltas: Partial<Record<StateColumn, number>>, counters: Partial<Record<CounterName, number>>, held = false): void {
  const t = store.config.typeSettings(type);
  // The row is there before anything is owed to it: the count triggers of the moves that follow update it in place.
  store.sql.exec(ENSURE, type);
  // A held retry's moves in and out of pending are owed too, unless a depth cap reads its pending (count-debt.ts).
  const owes = held ? t.maxDepth === null : !deltas.pending;
  if (owes && !t.ordered && !(store.scoped && t.serializeByScope)) {
    store.debt.owe({ type, at: now, deltas, counters });
    // What is owed is lost with the instance: the catalog's mark, in this transaction, says to recount (`recount`).
    store.touched(now);
    return;
  }
  bump(store.sql, type, now, deltas, counters);
}

/**
 * tallyCreated: `rows` were inserted — pending, or running when they went straight to a handler (enqueue.ts) —
 * counted, `enqueued` in the minute, and `started` for the running ones.
 */
export function tallyCreated(store: HomeStore, rows: readonly { type: string; state: string }[], now: number): void {
  for (const [type, list] of byType(rows)) {
    const running = list.filter((r) => r.state === "running").length;
    count(store, type, now, { pending: list.length - running, running }, { enqueued: list.length, started: running });
  }
}

/** tallyMoved: `rows` went from `from` to `to` (neither failed) at `now`, counted in `metric`'s minute. */
export function tallyMoved(store: HomeStore, rows: readonly { type: string }[], from: "pending" | "running", to: "running" | "completed", metric: "started" | "completed", now: number): void {
  for (const [type, list] of byType(rows)) count(store, type, now, { [from]: -list.length, [to]: list.length }, { [metric]: list.length });
}

/**
 * tallyHeld: a held retry's move (held-retries.ts) — its failed attempt back to pending (`retried` in the minute),
 * or its restart to running (`started`); the statement bumped its `tally`, so the count trigger left it here.
 */
export function tallyHeld(store: HomeStore, row: { type: string }, move: "held" | "restarted", now: number): void {
  if (move === "held") count(store, row.type, now, { running: -1, pending: 1 }, { retried: 1 }, true);
  else count(store, row.type, now, { pending: -1, running: 1 }, { started: 1 }, true);
}

/** tallyDeleted: `rows` were deleted (retention or prune), each in its state. */
export function tallyDeleted(store: HomeStore, rows: readonly { type: string; state: string; failure_kind: string | null }[], now: number): void {
  for (const [type, list] of byType(rows)) {
    const deltas: Partial<Record<StateColumn, number>> = {};
    for (const r of list) {
      const col = stateColumn(r.state, r.failure_kind);
      deltas[col] = (deltas[col] ?? 0) - 1;
    }
    count(store, type, now, deltas, {});
  }
}

/**
 * payCounts: write what is owed (count-debt.ts), one row per type and minute, in one transaction; every reader of
 * the counts beyond `pending` calls this first. Writes nothing when nothing is owed.
 */
export function payCounts(store: HomeStore): void {
  if (store.debt.size === 0) return;
  store.atomic(() => {
    const sums = new Map<string, { type: string; at: number; deltas: Partial<Record<StateColumn, number>>; counters: Partial<Record<CounterName, number>> }>();
    for (const o of store.debt.take()) {
      const key = `${o.type}\u0000${minuteOf(o.at)}`;
      const sum = sums.get(key) ?? sums.set(key, { type: o.type, at: o.at, deltas: {}, counters: {} }).get(key)!;
      sum.at = Math.max(sum.at, o.at);
      for (const [c, n] of Object.entries(o.deltas) as [StateColumn, number][]) sum.deltas[c] = (sum.deltas[c] ?? 0) + n;
      for (const [c, n] of Object.entries(o.counters) as [CounterName, number][]) sum.counters[c] = (sum.counters[c] ?? 0) + n;
    }
    for (const { type, at, deltas, counters } of sums.values()) {
      store.sql.exec(ENSURE, type);
      bump(store.sql, type, at, deltas, counters);
    }
  });
}

/**
 * recount: every type's state counts read again from the job table — an instance that starts where the one before
 * may have died owing counts (count-debt.ts). Reads every job once; writes one row per type.
 */
export function recount(sql: SqlStorage): void {
  const sums = STATE_COLUMNS.map((c) => (c.startsWith("failed_") ? `sum(state = 'failed' AND failure_kind = '${c.slice("failed_".length)}')` : `sum(state = '${c}')`));
  sql.exec(`UPDATE type_count SET ${STATE_COLUMNS.map((c) => `${c} = 0`).join(", ")} WHERE type NOT IN (SELECT DISTINCT type FROM job)`);
  sql.exec(
    `INSERT INTO type_count (type, ${STATE_COLUMNS.join(", ")}) SELECT type, ${sums.join(", ")} FROM job GROUP BY type
     ON CONFLICT (type) DO UPDATE SET ${STATE_COLUMNS.map((c) => `${c} = excluded.${c}`).join(", ")}`,
  );
}
