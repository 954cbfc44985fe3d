/**
 * KeyTurns: whose turn it is among a keyed type's key values in this object (docs/guards.md "Keyed limits") —
 * where the last batch left off in key order, and which key values a pool refused and until when.
 *
 * A refused key value is skipped without a pool call until its pool's hint passes, or until that pool pokes this
 * object (a slot of that key freed): the poke names the pool, so it ends only that key's wait. A poke that names
 * no pool (a pool object of the release before) ends every wait here (`unblockAll`).
 *
 * @module
 */
import { isKeyedPool } from "./pool-name";

export class KeyTurns {
  private readonly after = new Map<string, string>();
  /** type → key → until (epoch ms). */
  private readonly blocked = new Map<string, Map<string, number>>();
  /** pool object → the (type, key) it refused. */
  private readonly byPool = new Map<string, { type: string; key: string }>();
  /** type → key values a pool's poke freed: asked first, before the turn goes on (no scan to find them). */
  private readonly freed = new Map<string, Set<string>>();
  /** type → until when a scan would find only values at their limit (the last one did): pokes free them meanwhile. */
  private readonly exhausted = new Map<string, number>();

  /** lastServed: where the type's next turn starts (after this key value), or null from the start. */
  lastServed(type: string): string | null {
    return this.after.get(type) ?? null;
  }

  served(type: string, key: string): void {
    this.after.set(type, key);
  }

  /** blockedUntil: when the key value may be asked again, or null when it may now. */
  blockedUntil(type: string, key: string, now: number): number | null {
    const until = this.blocked.get(type)?.get(key);
    return until !== undefined && until > now ? until : null;
  }

  block(type: string, key: string, until: number, pool: string): void {
    let m = this.blocked.get(type);
    if (!m) this.blocked.set(type, (m = new Map()));
    m.set(key, until);
    this.byPool.set(pool, { type, key });
  }

  /** unblockPool: the pool freed a slot for this object; returns the type whose key it was, if it refused one here. */
  unblockPool(pool: string): string | null {
    if (!isKeyedPool(pool)) return null;
    const k = this.byPool.get(pool);
    if (!k) return null;
    this.byPool.delete(pool);
    this.blocked.get(k.type)?.delete(k.key);
    let f = this.freed.get(k.type);
    if (!f) this.freed.set(k.type, (f = new Set()));
    f.add(k.key);
    return k.type;
  }

  /** takeFreed: the key values of the type a poke freed since the last take. */
  takeFreed(type: string): string[] {
    const f = this.freed.get(type);
    if (!f || f.size === 0) return [];
    this.freed.delete(type);
    return [...f];
  }

  /** mayScan: whether looking through the type's due values in turn may find one not at its limit. */
  mayScan(type: string, now: number): boolean {
    return (this.exhausted.get(type) ?? 0) <= now;
  }

  /** exhaust: a scan found every due value at its limit; none is looked for again until `until` or new work. */
  exhaust(type: string, until: number): void {
    this.exhausted.set(type, until);
  }

  /** fresh: jobs of the type came due (enqueued, retried, resumed): a value not seen yet may be among them. */
  fresh(type: string): void {
    this.exhausted.delete(type);
  }

  unblockAll(): void {
    this.blocked.clear();
    this.byPool.clear();
    this.freed.clear();
    this.exhausted.clear();
  }
}
