/**
 * Slots: the worker's `concurrency` places for attempts. An attempt holds one
 * from its claim until its outcome is answered — or until its completion is
 * handed to the next claim to carry, which gives the slot back early (so that
 * claim can ask for it) while stop() still waits for the attempt
 * (docs/pull-workers.md "Pull workers", one call for what finishes together).
 *
 * @module
 */

export class Slots<A extends { readonly job: { id: string } }> {
  private readonly running = new Map<string, A>();
  private readonly handedOff = new Set<A>();
  private freed: (() => void) | null = null;

  constructor(readonly size: number) {}

  /** free: places a claim may ask for now. */
  get free(): number {
    return this.size - this.running.size;
  }

  take(a: A): void {
    this.running.set(a.job.id, a);
  }

  /** handOff: `a`'s place goes back before its outcome is answered. */
  handOff(a: A): void {
    this.drop(a);
    this.handedOff.add(a);
  }

  /** end: `a` is over; its place goes back. */
  end(a: A): void {
    this.drop(a);
    this.handedOff.delete(a);
    this.wake();
  }

  /** holding: the attempts holding a place. */
  holding(): A[] {
    return [...this.running.values()];
  }

  /** unanswered: every attempt whose outcome is not answered yet, handed off or not. */
  unanswered(): A[] {
    return [...this.running.values(), ...this.handedOff];
  }

  /** untilFree: resolves when a place goes back, or on wake(). */
  untilFree(): Promise<void> {
    return new Promise<void>((resolve) => (this.freed = resolve)).finally(() => (this.freed = null));
  }

  /** waiting: someone is in untilFree(). */
  get waiting(): boolean {
    return this.freed !== null;
  }

  wake(): void {
    this.freed?.();
  }

  /** Only its own entry: a lost job's id may already be held by a newer lease of it. */
  private drop(a: A): void {
    if (this.running.get(a.job.id) === a) this.running.delete(a.job.id);
  }
}
