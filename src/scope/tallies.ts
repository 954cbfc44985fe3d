/**
 * Counting in bulk: the statements that move many jobs at once count their
 * moves here — one `job_count` upsert per (type, state) and one
 * `metric_minute` upsert per type for all their rows — where the count
 * triggers wrote one per row (a 100-job claim: 3 rows written, not 300). Such
 * a statement bumps each row's `tally` column, and the triggers skip a row
 * whose `tally` changed (migration `tallied_triggers`); every other statement
 * is still counted by trigger. Called in the statement's transaction, with the
 * rows it returned, so counts still never drift from rows.
 *
 * @module
 */
import { minuteOf, type CounterName } from "../metrics/counters";
import type { JobState } from "../job/states";

type Moved = { readonly type: string };
type Gone = { readonly type: string; readonly state: string; readonly failure_kind: string | null };

const COUNT_ADD = `
INSERT INTO job_count (type, state, failure_kind, n) VALUES (?, ?, ?, ?)
ON CONFLICT (type, state, failure_kind) DO UPDATE SET n = n + excluded.n`;
const COUNT_TAKE = "UPDATE job_count SET n = n - ? WHERE type = ? AND state = ? AND failure_kind = ?";
const metricAdd = (c: CounterName) => `
INSERT INTO metric_minute (minute, type, ${c}) VALUES (?, ?, ?)
ON CONFLICT (minute, type) DO UPDATE SET ${c} = ${c} + excluded.${c}`;
const METRIC_ADD: Partial<Record<CounterName, string>> = { started: metricAdd("started"), completed: metricAdd("completed") };

function byType(rows: readonly Moved[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const r of rows) n.set(r.type, (n.get(r.type) ?? 0) + 1);
  return n;
}

/** tallyCreated: `rows` were inserted pending (the enqueue counts `enqueued` itself). */
export function tallyCreated(sql: SqlStorage, rows: readonly Moved[]): void {
  for (const [type, n] of byType(rows)) sql.exec(COUNT_ADD, type, "pending", "", n);
}

/** tallyMoved: `rows` went from `from` to `to` (neither failed) at `now`, counted in `metric`'s minute. */
export function tallyMoved(sql: SqlStorage, rows: readonly Moved[], from: JobState, to: JobState, metric: "started" | "completed", now: number): void {
  for (const [type, n] of byType(rows)) {
    sql.exec(COUNT_TAKE, n, type, from, "");
    sql.exec(COUNT_ADD, type, to, "", n);
    sql.exec(METRIC_ADD[metric]!, minuteOf(now), type, n);
  }
}

/** tallyDeleted: `rows` were deleted (retention or prune), each in its state. */
export function tallyDeleted(sql: SqlStorage, rows: readonly Gone[]): void {
  const n = new Map<string, { type: string; state: string; kind: string; n: number }>();
  for (const r of rows) {
    const kind = r.failure_kind ?? "";
    const key = `${r.type}\u0000${r.state}\u0000${kind}`;
    const held = n.get(key);
    if (held) held.n++;
    else n.set(key, { type: r.type, state: r.state, kind, n: 1 });
  }
  for (const g of n.values()) sql.exec(COUNT_TAKE, g.n, g.type, g.state, g.kind);
}
