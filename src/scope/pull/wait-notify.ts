/**
 * Telling parked pull claims (claim-wait/wait-do.ts) that a pulled type has due work
 * here. Throttled per type within one object instance (NOTIFY_EVERY_MS), so a
 * burst of enqueues costs one call, and only pulled types are told (pushed
 * ones are dispatched by this object itself).
 *
 * @module
 */

const NOTIFY_EVERY_MS = 50;

export class WaitNotifier {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly send: (type: string) => Promise<unknown>,
    private readonly keepAlive: (p: Promise<unknown>) => void,
  ) {}

  /** due: these pulled types have due work here now. */
  due(types: Iterable<string>, now: number): void {
    for (const type of types) {
      const at = this.last.get(type);
      if (at !== undefined && now - at < NOTIFY_EVERY_MS) continue;
      this.last.set(type, now);
      this.keepAlive(this.send(type).catch((e: unknown) => console.error(JSON.stringify({ event: "wait:notify_failed", type, error: String(e) }))));
    }
  }
}
