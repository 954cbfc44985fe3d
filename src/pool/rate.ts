/**
 * A pool's `rate` (docs/guards.md "Rate limits"): the generic cell rate algorithm. Each unit of rate cost moves
 * the pool's theoretical arrival time (`tat`) on by the interval T = periodMs / limit; a start is allowed while
 * `tat` is at most `(burst − 1)·T` ahead of now. With the default burst of 1 starts are spaced T apart, so no
 * window of `periodMs` ever holds more than `limit` of them — a window boundary admits no second budget, as
 * the fixed window of `ratePerMinute` does. A larger burst lets that many start at once, and at most
 * `burst + limit − 1` in one period.
 *
 * The state is one number, kept in `pool_state` with the interval it was spent at (a refund gives back that
 * many intervals; the pool's alarm wakes its waiters when the next start fits).
 *
 * @module
 */
import type { RateSettings } from "../config/limits";

export interface RateState {
  tat: number;
  /** The interval and the tolerance the spend was made under. */
  intervalMs: number;
  toleranceMs: number;
}

export function intervalOf(rate: RateSettings): number {
  return rate.periodMs / rate.limit;
}

/**
 * spend: of `want` starts costing `cost` each, how many fit now; the state after them, and (none fitting) how long
 * until one does.
 */
export function spend(state: RateState | null, rate: RateSettings, cost: number, want: number, now: number): { n: number; state: RateState; retryAfterMs: number } {
  const intervalMs = intervalOf(rate);
  const toleranceMs = (rate.burst - 1) * intervalMs;
  let tat = Math.max(state?.tat ?? now, now);
  let n = 0;
  while (n < want && tat - now <= toleranceMs) {
    tat += cost * intervalMs;
    n++;
  }
  return { n, state: { tat, intervalMs, toleranceMs }, retryAfterMs: Math.max(0, Math.ceil(tat - now - toleranceMs)) };
}

/** refund: starts that never happened give their intervals back (never to before now: unused time is not banked). */
export function refund(state: RateState, units: number, now: number): RateState {
  return { ...state, tat: Math.max(now, state.tat - units * state.intervalMs) };
}

/** readyAt: when the next start fits, or null when one fits now. */
export function readyAt(state: RateState | null, now: number): number | null {
  if (!state) return null;
  const t = Math.ceil(state.tat - state.toleranceMs);
  return t > now ? t : null;
}

/** drained: every interval spent has passed — the state says nothing any more. */
export function drained(state: RateState | null, now: number): boolean {
  return state === null || state.tat <= now;
}
