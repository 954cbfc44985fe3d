/**
 * Spend caps, the catalog's side (config/budgets.ts; docs/operating.md "Spend caps"). What a budget's window has
 * spent is summed from what the catalog already keeps — the objects' usage per minute (`usage_minute`) and the types'
 * counters per minute (`metric_series`) — in every shard (the main catalog object asks the others). The main object's
 * alarm, which runs within seconds of activity, compares: a crossed soft limit is an event (a log line), a crossed
 * hard limit pauses the types the budget covers (as POST /v1/types/{type}/pause does), once per window; the window's
 * turn, or an operator's lift, resumes the types it paused. Plain functions over SqlStorage; the DO does the calls.
 *
 * @module
 */
import { windowOf, type BudgetSettings, type BudgetUnit } from "../config/budgets";
import type { BudgetView } from "../job/schemas/budgets";

/** One sum a budget needs: its unit, its types (null: all), since its window's start. */
export interface SpendQuery {
  unit: BudgetUnit;
  types: readonly string[] | null;
  from: number;
}

const USAGE_SINCE = (col: string) => `SELECT coalesce(sum(${col}), 0) AS n FROM usage_minute WHERE minute >= ?1`;
const COUNTER_SINCE = (col: string) => `
SELECT coalesce(sum(${col}), 0) AS n FROM metric_series
 WHERE minute >= ?1 AND (?2 IS NULL OR type IN (SELECT value FROM json_each(?2)))`;
const SPEND_SQL: Record<BudgetUnit, string> = {
  rowsWritten: USAGE_SINCE("rows_written"),
  requests: USAGE_SINCE("requests"),
  attempts: COUNTER_SINCE("started"),
  enqueued: COUNTER_SINCE("enqueued"),
};

/** spend: this shard's sums, one per query. */
export function spend(sql: SqlStorage, queries: readonly SpendQuery[]): number[] {
  return queries.map((q) =>
    q.unit === "rowsWritten" || q.unit === "requests"
      ? sql.exec<{ n: number }>(SPEND_SQL[q.unit], q.from).one().n
      : sql.exec<{ n: number }>(SPEND_SQL[q.unit], q.from, q.types === null ? null : JSON.stringify(q.types)).one().n,
  );
}

export function spendQuery(b: BudgetSettings, now: number): SpendQuery {
  return { unit: b.unit, types: b.types, from: windowOf(b.window, now).start };
}

type StateRow = { name: string; window_start: number; soft_at: number | null; hard_at: number | null; paused: string | null; lifted_at: number | null };

const STATE = "SELECT * FROM budget_state WHERE name = ?";
const STATES = "SELECT * FROM budget_state";
const PUT_STATE = `
INSERT INTO budget_state (name, window_start, soft_at, hard_at, paused, lifted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (name) DO UPDATE SET window_start = ?2, soft_at = ?3, hard_at = ?4, paused = ?5, lifted_at = ?6`;
/** Every type the catalog knows of: the homes' and the counters' (a queue budget covers them all). */
const KNOWN_TYPES = "SELECT type FROM home_type UNION SELECT type FROM metric_series UNION SELECT type FROM type_pause";
const PAUSED_TYPES = "SELECT type FROM type_pause WHERE paused = 1";

/** What a check decided: the types to pause and resume, and the lines to log. */
export interface BudgetActions {
  pause: string[];
  resume: string[];
  events: Record<string, unknown>[];
}

/**
 * check: each budget against what its window spent (`spent`, in `budgets` order), inside the caller's transaction.
 * A window that turned resumes what its budget paused; a soft crossing is an event; a hard crossing pauses the
 * covered types not paused already (an operator's pause is not the budget's to lift), once per window.
 */
export function check(sql: SqlStorage, budgets: readonly BudgetSettings[], spent: readonly number[], configTypes: readonly string[], now: number): BudgetActions {
  const out: BudgetActions = { pause: [], resume: [], events: [] };
  budgets.forEach((b, i) => {
    const w = windowOf(b.window, now);
    const held = sql.exec<StateRow>(STATE, b.name).toArray()[0];
    // A budget that crossed nothing has no row: a check of a quiet queue writes nothing.
    let st: StateRow = held ?? { name: b.name, window_start: w.start, soft_at: null, hard_at: null, paused: null, lifted_at: null };
    let changed = false;
    if (st.window_start < w.start) {
      const was = pausedOf(st);
      if (was.length > 0) {
        out.resume.push(...was);
        out.events.push({ event: "budget:window_turned", budget: b.name, resumed: was });
      }
      st = { name: b.name, window_start: w.start, soft_at: null, hard_at: null, paused: null, lifted_at: null };
      changed = true;
    }
    const n = spent[i] ?? 0;
    const base = { budget: b.name, unit: b.unit, window: b.window, spent: n, windowStart: w.start };
    if (b.soft !== null && n >= b.soft && st.soft_at === null) {
      st = { ...st, soft_at: now };
      changed = true;
      out.events.push({ event: "budget:soft_limit", ...base, limit: b.soft });
    }
    if (b.hard !== null && n >= b.hard && st.hard_at === null) {
      const already = new Set(sql.exec<{ type: string }>(PAUSED_TYPES).toArray().map((r) => r.type));
      const covered = b.types ?? [...new Set([...configTypes, ...sql.exec<{ type: string }>(KNOWN_TYPES).toArray().map((r) => r.type)])].sort();
      const pause = covered.filter((t) => !already.has(t));
      st = { ...st, hard_at: now, paused: JSON.stringify(pause) };
      changed = true;
      out.pause.push(...pause);
      out.events.push({ event: "budget:hard_limit", ...base, limit: b.hard, paused: pause });
    }
    if (changed) put(sql, st);
  });
  // A type another budget still holds paused (its state is written above) is not resumed by this one's turn.
  out.resume = [...new Set(out.resume)].filter((t) => !stillHeld(sql, t));
  return out;
}

/** stillHeld: some budget's current window holds the type paused. */
function stillHeld(sql: SqlStorage, type: string): boolean {
  return states(sql).some((s) => pausedOf(s).includes(type));
}

/** lift: an operator ends the budget's pause for the rest of its window; answers the types to resume (null: no such budget state). */
export function lift(sql: SqlStorage, b: BudgetSettings, now: number): string[] {
  const st = sql.exec<StateRow>(STATE, b.name).toArray()[0];
  if (!st || st.window_start < windowOf(b.window, now).start) return [];
  const resume = pausedOf(st);
  put(sql, { ...st, paused: null, lifted_at: now, hard_at: st.hard_at ?? now });
  return resume.filter((t) => !stillHeld(sql, t));
}

/** nextTurn: when the earliest window with a pause in it turns (the alarm's time to resume), or null. */
export function nextTurn(sql: SqlStorage, budgets: readonly BudgetSettings[], now: number): number | null {
  const byName = new Map(budgets.map((b) => [b.name, b]));
  const ends = states(sql)
    .filter((s) => pausedOf(s).length > 0 && byName.has(s.name))
    .map((s) => windowOf(byName.get(s.name)!.window, s.window_start).end);
  return ends.length === 0 ? null : Math.max(now, Math.min(...ends));
}

/** views: each configured budget with its window's state and spend. */
export function views(sql: SqlStorage, budgets: readonly BudgetSettings[], spent: readonly number[], now: number): BudgetView[] {
  return budgets.map((b, i) => {
    const w = windowOf(b.window, now);
    const raw = sql.exec<StateRow>(STATE, b.name).toArray()[0];
    const st = raw && raw.window_start >= w.start ? raw : null;
    // A pause from a window already turned still shows until the alarm resumes it.
    const paused = raw ? pausedOf(raw) : [];
    return {
      name: b.name,
      window: b.window,
      unit: b.unit,
      types: b.types === null ? null : [...b.types],
      soft: b.soft,
      hard: b.hard,
      spent: spent[i] ?? 0,
      windowStart: w.start,
      windowEnd: w.end,
      softCrossedAt: st?.soft_at ?? null,
      hardCrossedAt: st?.hard_at ?? null,
      paused,
      liftedAt: st?.lifted_at ?? null,
    };
  });
}

function states(sql: SqlStorage): StateRow[] {
  return sql.exec<StateRow>(STATES).toArray();
}

function pausedOf(s: StateRow): string[] {
  return s.paused ? (JSON.parse(s.paused) as string[]) : [];
}

function put(sql: SqlStorage, s: StateRow): void {
  sql.exec(PUT_STATE, s.name, s.window_start, s.soft_at, s.hard_at, s.paused, s.lifted_at);
}
