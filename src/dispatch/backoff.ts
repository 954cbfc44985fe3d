/**
 * TypeBackoff: a push type refused by a guard (a full pool, a spent rate, a
 * running type, a waitsFor type) waits before the dispatcher asks again —
 * until the pool's hint, or until the pool pokes the object (`unblock`).
 *
 * A refusal that was already on its way when a poke arrived must not back the
 * type off again: each refusal carries the unblock epoch it was asked under.
 * A type refused STARVING_AFTER times in a row logs `job:starving`, naming
 * what blocks it, then every STARVING_EVERY more.
 *
 * @module
 */

/** A type blocked this many times in a row logs `job:starving`, then every STARVING_EVERY more. */
export const STARVING_AFTER = 20;
export const STARVING_EVERY = 100;

export class TypeBackoff {
  private readonly until = new Map<string, number>();
  private readonly times = new Map<string, number>();
  private unblocks = 0;
  /** Batch types held back while they gather (batch-take.ts): not refusals, and new due jobs end the hold. */
  private readonly gathering = new Set<string>();

  constructor(
    private readonly now: () => number,
    private readonly home: () => string,
  ) {}

  /** epoch: pass it to `blocked` with a refusal that is asked for now. */
  get epoch(): number {
    return this.unblocks;
  }

  /** blockedUntil: when the type may be asked again (a time that may have passed: ask isBlocked), or undefined when it was not backed off since the last unblock. */
  blockedUntil(type: string): number | undefined {
    return this.until.get(type);
  }

  isBlocked(type: string, now: number): boolean {
    return (this.until.get(type) ?? 0) > now;
  }

  /** blocked: back the type off for `retryAfterMs` (unless unblocked since `epoch`) and count the refusal. */
  blocked(type: string, retryAfterMs: number, why: string, epoch: number): void {
    if (epoch === this.unblocks) this.until.set(type, this.now() + retryAfterMs);
    // A refusal's hold is not a gathering's: new due jobs must not end it (ungather).
    this.gathering.delete(type);
    const n = (this.times.get(type) ?? 0) + 1;
    this.times.set(type, n);
    if (n === STARVING_AFTER || (n > STARVING_AFTER && (n - STARVING_AFTER) % STARVING_EVERY === 0)) {
      console.warn(JSON.stringify({ event: "job:starving", type, home: this.home(), blockedTimes: n, blockedBy: why }));
    }
  }

  /** served: the type got a batch; its run of refusals is over. */
  served(type: string): void {
    this.times.delete(type);
    this.gathering.delete(type);
  }

  /** gather: hold a batch type back until `until` while it gathers jobs for a fuller call (no refusal counted). */
  gather(type: string, until: number): void {
    this.until.set(type, until);
    this.gathering.add(type);
  }

  /** freed: this object gave back permits of the type that it may take again itself (kept ones): ask again now. */
  freed(type: string): void {
    this.until.delete(type);
    this.gathering.delete(type);
  }

  /** ungather: jobs of the type came due — a gathering type looks again at once (it may be full now). */
  ungather(type: string): void {
    if (!this.gathering.delete(type)) return;
    this.until.delete(type);
  }

  /** unblock: a pool freed a slot for this object — forget every back-off. */
  unblock(): void {
    this.until.clear();
    this.unblocks++;
  }
}
