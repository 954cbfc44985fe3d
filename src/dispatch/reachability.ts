/**
 * Whether a handler binding can be reached, as this object has seen it.
 *
 * A batch that never reached the handler's code is the platform's failure, not
 * the job's: the handler Worker is not running (locally: not started beside
 * the queue), not deployed, or failed before its code ran. The handler SDK's
 * first act in `run` is to call `control.next()`, so a call that failed before
 * the control heard from the handler never reached it. Its jobs go back to
 * pending without spending an attempt, due again after as long as the binding
 * has been unreachable (at least 1 s, at most a minute: a handler Worker that
 * comes back is used again within that) — a wait that grows with the outage,
 * not with how many jobs or calls hit it — and the outage is logged once per
 * binding, not per job (docs/handlers.md "Write a handler Worker").
 *
 * @module
 */

const UNREACHABLE_BASE_MS = 1_000;
const UNREACHABLE_MAX_MS = 60_000;

export class Reachability {
  /** Per binding: when its outage began (the first call that did not reach it), and the calls that failed since. */
  private readonly outages = new Map<string, { since: number; calls: number }>();

  constructor(
    private readonly home: () => string,
    private readonly now: () => number,
  ) {}

  /** unreachable: a call to `binding` failed before reaching the handler; returns how long its jobs wait. */
  unreachable(binding: string, error: string): number {
    const now = this.now();
    let outage = this.outages.get(binding);
    if (!outage) {
      outage = { since: now, calls: 0 };
      this.outages.set(binding, outage);
      console.error(JSON.stringify({ event: "dispatch:handler_unreachable", binding, home: this.home(), error }));
    }
    outage.calls++;
    return Math.min(Math.max(UNREACHABLE_BASE_MS, now - outage.since), UNREACHABLE_MAX_MS);
  }

  /** reached: a call reached the handler; after an outage, say so once. */
  reached(binding: string): void {
    const outage = this.outages.get(binding);
    if (!outage) return;
    this.outages.delete(binding);
    console.log(JSON.stringify({ event: "dispatch:handler_reachable", binding, home: this.home(), failedCalls: outage.calls, outageMs: this.now() - outage.since }));
  }
}
