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

const STATES = "SELECT * FROM budget_state";
const PUT_STATE = `
INSERT INTO budget_state (name, window_start, soft_at, hard_at, paused, lifted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (name) DO UPDATE SET window_start = ?2, soft_at = ?3, hard_at = ?4, paused = ?5, lifted_at = ?6`;
const DROP_STATE = "DELETE FROM budget_state WHERE name = ?";
/** Every type the catalog knows of: the homes' and the counters' (a queue budget covers them all). */
const KNOWN_TYPES = "SELECT type FROM home_type UNION SELECT type FROM metric_series UNION SELECT type FROM type_pause";
const PAUSED_TYPES = "SELECT type FROM type_pause WHERE paused = 1";

/**
 * What a check or a lift decided, written only once its pauses and resumes are done (budget-keeper.ts): should a
 * shard be out of reach, nothing is written and the next check decides again — pauses and resumes are idempotent.
 */
export interface BudgetActions {
  pause: string[];
  resume: string[];
  events: Record<string, unknown>[];
  /** The states to write, and the names to drop (budgets no longer in the config). */
  write: StateRow[];
  drop: string[];
}

/** live: the states of configured budgets whose window is the current one — the ones that may hold a type paused. */
function live(states: readonly StateRow[], budgets: readonly BudgetSettings[], now: number): StateRow[] {
  const byName = new Map(budgets.map((b) => [b.name, b]));
  return states.filter((s) => byName.has(s.name) && s.window_start >= windowOf(byName.get(s.name)!.window, now).start);
}

/**
 * check: each budget against what its window spent (`spent`, in `budgets` order). A window that turned resumes what
 * its budget paused; a soft crossing is an event; a hard crossing pauses the covered types, once per window — all
 * but those an operator paused (no budget holds them), which are not the budget's to resume. A type two budgets
 * hold stays paused until neither does. A budget gone from the config gives back what it held.
 */
export function check(sql: SqlStorage, budgets: readonly BudgetSettings[], spent: readonly number[], configTypes: readonly string[], now: number, otherShardsTypes: readonly string[] = []): BudgetActions {
  const out: BudgetActions = { pause: [], resume: [], events: [], write: [], drop: [] };
  const held = new Map(states(sql).map((s) => [s.name, s]));
  const next = new Map(held);
  const freed: string[] = [];
  for (const [name, s] of held) {
    if (budgets.some((b) => b.name === name)) continue;
    freed.push(...pausedOf(s));
    next.delete(name);
    out.drop.push(name);
  }
  const paused = new Set(sql.exec<{ type: string }>(PAUSED_TYPES).toArray().map((r) => r.type));
  const byBudgets = new Set(live([...held.values()], budgets, now).flatMap(pausedOf));
  const byOperator = new Set([...paused].filter((t) => !byBudgets.has(t)));
  budgets.forEach((b, i) => {
    const w = windowOf(b.window, now);
    let st = held.get(b.name) ?? { name: b.name, window_start: w.start, soft_at: null, hard_at: null, paused: null, lifted_at: null };
    // A budget that crossed nothing has no row: a check of a quiet queue writes nothing.
    let changed = false;
    if (st.window_start < w.start) {
      const was = pausedOf(st);
      if (was.length > 0) out.events.push({ event: "budget:window_turned", budget: b.name, resumed: was });
      freed.push(...was);
      st = { name: b.name, window_start: w.start, soft_at: null, hard_at: null, paused: null, lifted_at: null };
      changed = held.has(b.name);
    }
    const n = spent[i] ?? 0;
    const base = { budget: b.name, unit: b.unit, window: b.window, spent: n, windowStart: w.start };
    if (b.soft !== null && n >= b.soft && st.soft_at === null) {
      st = { ...st, soft_at: now };
      changed = true;
      out.events.push({ event: "budget:soft_limit", ...base, limit: b.soft });
    }
    if (b.hard !== null && n >= b.hard && st.hard_at === null) {
      const covered = b.types ?? [...new Set([...configTypes, ...knownTypes(sql), ...otherShardsTypes])].sort();
      const holds = covered.filter((t) => !byOperator.has(t));
      st = { ...st, hard_at: now, paused: JSON.stringify(holds) };
      changed = true;
      out.pause.push(...holds.filter((t) => !paused.has(t)));
      out.events.push({ event: "budget:hard_limit", ...base, limit: b.hard, paused: holds });
    }
    if (changed) {
      next.set(b.name, st);
      out.write.push(st);
    }
  });
  // A type another budget still holds paused is not resumed by this one's turn.
  const still = new Set(live([...next.values()], budgets, now).flatMap(pausedOf));
  out.resume = [...new Set(freed)].filter((t) => !still.has(t));
  out.pause = [...new Set(out.pause)];
  return out;
}

/** lift: an operator ends the budget's pause for the rest of its window (and stops it pausing again in it). */
export function lift(sql: SqlStorage, budgets: readonly BudgetSettings[], b: BudgetSettings, now: number): BudgetActions {
  const w = windowOf(b.window, now);
  const st = states(sql).find((s) => s.name === b.name);
  // Its own list, also from a window whose turn the alarm has not taken yet.
  const was = st ? pausedOf(st) : [];
  const lifted: StateRow = { name: b.name, window_start: w.start, soft_at: st && st.window_start >= w.start ? st.soft_at : null, hard_at: st && st.window_start >= w.start && st.hard_at !== null ? st.hard_at : now, paused: null, lifted_at: now };
  const others = live(states(sql).filter((s) => s.name !== b.name), budgets, now).flatMap(pausedOf);
  return { pause: [], resume: was.filter((t) => !others.includes(t)), events: [{ event: "budget:lifted", budget: b.name, resumed: was }], write: [lifted], drop: [] };
}

/** forget: an operator paused or resumed the type by hand: no budget holds it any more (nor resumes it at its turn). */
export function forget(sql: SqlStorage, type: string): void {
  for (const s of states(sql)) {
    const list = pausedOf(s);
    if (list.includes(type)) put(sql, { ...s, paused: JSON.stringify(list.filter((t) => t !== type)) });
  }
}

/** apply: write what a check or lift decided, once its calls are done. */
export function apply(sql: SqlStorage, actions: BudgetActions): void {
  for (const s of actions.write) put(sql, s);
  for (const name of actions.drop) sql.exec(DROP_STATE, name);
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
    const raw = states(sql).find((s) => s.name === b.name);
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

/** health: the budgets holding types paused and those past their soft limit, from their states alone (no sums). */
export function health(sql: SqlStorage, budgets: readonly BudgetSettings[], now: number): { paused: string[]; warned: string[] } {
  const current = live(states(sql), budgets, now);
  return { paused: current.filter((s) => pausedOf(s).length > 0).map((s) => s.name), warned: current.filter((s) => s.soft_at !== null).map((s) => s.name) };
}

/** knownTypes: the types this shard knows of — its homes', its counters', its pauses' (a queue budget covers them all). */
export function knownTypes(sql: SqlStorage): string[] {
  return sql.exec<{ type: string }>(KNOWN_TYPES).toArray().map((r) => r.type);
}
