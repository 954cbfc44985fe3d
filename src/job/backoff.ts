/**
 * Retry delays: exponential backoff with full jitter (AWS architecture blog,
 * "Exponential Backoff And Jitter"): a uniform draw in
 * `[0, min(maxMs, baseMs * 2^(attempt-1))]`. Full jitter spreads a burst of
 * failures instead of retrying them in lockstep. `retryAfterMs` from the
 * handler is a floor on top.
 *
 * @module
 */

export interface Backoff {
  /** exponential (the default): full jitter up to min(maxMs, baseMs · 2^(attempt−1)); fixed: baseMs every time. */
  kind?: "exponential" | "fixed";
  baseMs: number;
  maxMs: number;
}

export const BACKOFF_DEFAULT: Backoff = { baseMs: 1000, maxMs: 5 * 60 * 1000 };

/** retryDelayMs for the given attempt (1 = the attempt that just failed). `random` returns [0, 1). */
export function retryDelayMs(backoff: Backoff, attempt: number, retryAfterMs: number | undefined, random: () => number): number {
  if (backoff.kind === "fixed") return Math.max(backoff.baseMs, retryAfterMs ?? 0);
  const exp = Math.min(Math.max(attempt, 1) - 1, 30);
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** exp);
  const jittered = Math.floor(random() * (ceiling + 1));
  return Math.max(jittered, retryAfterMs ?? 0);
}
