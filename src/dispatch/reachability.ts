/**
 * Whether a handler binding can be reached, as this object has seen it.
 *
 * A batch that never reached the handler's code is the platform's failure, not
 * the job's: the handler Worker is not running (locally: not started beside
 * the queue), not deployed, or failed before its code ran. The handler SDK's
 * first act in `run` is to call `control.next()`, so a call that failed before
 * the control heard from the handler never reached it. Its jobs go back to
 * pending without spending an attempt, due after a backoff shared by the
 * binding (1 s, doubling, at most a minute: a handler Worker that comes back is
 * used again within that), and the outage is logged once per binding, not per
 * job (README "Write a handler Worker").
 *
 * @module
 */

export const UNREACHABLE_BASE_MS = 1_000;
export const UNREACHABLE_MAX_MS = 60_000;

export class Reachability {
  /** Per binding: failed calls in a row that never reached the handler. */
  private readonly misses = new Map<string, number>();

  constructor(private readonly home: () => string) {}

  /** unreachable: a call to `binding` failed before reaching the handler; returns how long its jobs wait. */
  unreachable(binding: string, error: string): number {
    const n = (this.misses.get(binding) ?? 0) + 1;
    this.misses.set(binding, n);
    if (n === 1) console.error(JSON.stringify({ event: "dispatch:handler_unreachable", binding, home: this.home(), error }));
    return Math.min(UNREACHABLE_BASE_MS * 2 ** (n - 1), UNREACHABLE_MAX_MS);
  }

  /** reached: a call reached the handler; after an outage, say so once. */
  reached(binding: string): void {
    const n = this.misses.get(binding);
    if (n === undefined) return;
    this.misses.delete(binding);
    console.log(JSON.stringify({ event: "dispatch:handler_reachable", binding, home: this.home(), failedCalls: n }));
  }
}
