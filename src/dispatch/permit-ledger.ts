/**
 * PermitLedger: the pool permits of this object's handler calls — taken
 * before a batch is claimed (pool/permit-plan.ts), renewed while its call runs,
 * given back when its jobs settle.
 *
 * Releases are coalesced per pool within a tick: jobs of one batch settle
 * early one by one, and a PoolDO round trip per job made the pool the
 * bottleneck of a guarded type (one object grants ~1,000 calls/s). A release
 * lost with the object lapses with its permit's TTL.
 *
 * A key value's concurrency permit (a keyed pool's, docs/guards.md "Keyed
 * limits and rates", with no rate spent on it) that an ended attempt gives back
 * is kept a moment (PARK_MS) for this object's next batch of that value: a
 * tenant's jobs run back to back on its slots without a round trip to its pool
 * per job, as an unkeyed pool's batch of 100 takes one. A kept permit is used
 * again at most MAX_REUSES times, then goes back, so another object waiting for
 * the value gets its turn; one not used within PARK_MS goes back too.
 *
 * @module
 */
import { withTimeout } from "../deadlines";
import { POOL_CALL_TIMEOUT_MS, takePermits, type Held, type PermitStep, type PoolApi, type Taken } from "../pool/permit-plan";
import { isKeyedPool, keyedParts } from "../pool/pool-name";

/** How long an ended attempt's key value permit waits for the object's next batch of that value. */
const PARK_MS = 25;
/** Attempts one kept permit serves, at most, before it goes back to its pool. */
const MAX_REUSES = 16;

export interface Permit {
  pool: string;
  id: string;
}

export class PermitLedger {
  private readonly releases = new Map<string, { pool: string; ids: string[]; refund: boolean }>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Keyed pools' permits given back by ended attempts, kept for the next batch of their value: pool → ids. */
  private readonly parked = new Map<string, string[]>();
  /** Permits that may be kept (a keyed pool's, no rate spent), and how often each has been used again. */
  private readonly reusable = new Map<string, number>();
  private parkTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly pool: (name: string) => PoolApi,
    private readonly keepAlive: (p: Promise<unknown>) => void,
  ) {}

  /**
   * take: every permit of the plan for up to `want` jobs — kept ones first (a plan whose every step has some), then
   * from the pools; what a refused step had granted goes back refunded.
   */
  async take(plan: readonly PermitStep[], ask: { holder: string; want: number; ttlMs: number; epoch?: string }): Promise<Taken> {
    const kept = this.unpark(plan, ask.want);
    const more = ask.want - kept.count;
    const taken = more > 0 ? await takePermits(plan, { ...ask, want: more }, this.pool, (pool, ids) => this.release(pool, ids, true)) : null;
    if (taken?.ok) {
      for (const [i, step] of plan.entries()) if (isKeyedPool(step.pool) && step.request.rateCost === 0) for (const id of taken.held[i]!.ids) this.reusable.set(id, 0);
    }
    if (kept.count === 0) return taken!;
    if (!taken?.ok) return { ok: true, held: kept.held, count: kept.count };
    return { ok: true, held: kept.held.map((h, i) => ({ pool: h.pool, ids: [...h.ids, ...taken.held[i]!.ids] })), count: kept.count + taken.count };
  }

  /** keptKeys: the key values of a keyed limit (its object's name, `base`) this ledger keeps permits of. */
  keptKeys(base: string): string[] {
    const out: string[] = [];
    for (const pool of this.parked.keys()) {
      const parts = keyedParts(pool);
      if (parts?.base === base) out.push(parts.key);
    }
    return out;
  }

  /** unpark: kept permits for up to `want` jobs of the plan — as many as its step with the fewest has. */
  private unpark(plan: readonly PermitStep[], want: number): { held: Held[]; count: number } {
    const none = { held: [], count: 0 };
    if (this.parked.size === 0 || plan.length === 0) return none;
    const count = Math.min(want, ...plan.map((s) => this.parked.get(s.pool)?.length ?? 0));
    if (count <= 0) return none;
    const held = plan.map((s) => {
      const ids = this.parked.get(s.pool)!;
      const out = ids.splice(0, count);
      if (ids.length === 0) this.parked.delete(s.pool);
      for (const id of out) this.reusable.set(id, (this.reusable.get(id) ?? 0) + 1);
      return { pool: s.pool, ids: out };
    });
    return { held, count };
  }

  /** release gives permits back; `refund` when their attempts never started (their rate spend is returned). */
  release(pool: string, ids: readonly string[], refund = false): void {
    if (ids.length === 0) return;
    if (!refund && this.park(pool, ids)) return;
    const key = `${refund ? "refund" : "release"}\u0000${pool}`;
    const pending = this.releases.get(key);
    if (pending) {
      pending.ids.push(...ids);
      return;
    }
    this.releases.set(key, { pool, ids: [...ids], refund });
    this.timer ??= setTimeout(() => this.flush(), 0);
  }

  /**
   * renew: extend each permit to `ttlMs` (per permit: a pool shared by types of different leaseMs must keep
   * every permit past its own job's lease). Resolves with the permits the pools no longer held.
   */
  async renew(permits: readonly { permit: Permit; ttlMs: number }[]): Promise<Permit[]> {
    const byPool = new Map<string, { ids: string[]; ttlMs: number }>();
    for (const { permit, ttlMs } of permits) {
      const entry = byPool.get(permit.pool) ?? { ids: [], ttlMs: 0 };
      entry.ids.push(permit.id);
      entry.ttlMs = Math.max(entry.ttlMs, ttlMs);
      byPool.set(permit.pool, entry);
    }
    // Every pool at once: one after another, a pool that does not answer would hold the others' renewals up to
    // POOL_CALL_TIMEOUT_MS, past their permits' TTL (2 × a lease of 1 s at least), and they would hand the slots on.
    const lost = await Promise.all(
      [...byPool].map(async ([pool, { ids, ttlMs }]): Promise<Permit[]> => {
        try {
          const gone = await withTimeout(this.pool(pool).renew(ids, ttlMs), POOL_CALL_TIMEOUT_MS);
          if (gone.length === 0) return [];
          console.warn(JSON.stringify({ event: "pool:permits_lost", pool, count: gone.length }));
          return gone.map((id) => ({ pool, id }));
        } catch (e) {
          console.error(JSON.stringify({ event: "pool:renew_failed", pool, error: String(e) }));
          return [];
        }
      }),
    );
    return lost.flat();
  }

  /** park: keep a keyed pool's permits for the object's next batch of their value (all of them, or none: false). */
  private park(pool: string, ids: readonly string[]): boolean {
    if (!ids.every((id) => (this.reusable.get(id) ?? MAX_REUSES) < MAX_REUSES)) {
      for (const id of ids) this.reusable.delete(id);
      return false;
    }
    const list = this.parked.get(pool);
    if (list) list.push(...ids);
    else this.parked.set(pool, [...ids]);
    this.parkTimer ??= setTimeout(() => this.unparkAll(), PARK_MS);
    return true;
  }

  /** unparkAll: what no batch took within PARK_MS goes back to its pool. */
  private unparkAll(): void {
    this.parkTimer = null;
    const parked = [...this.parked];
    this.parked.clear();
    for (const [pool, ids] of parked) {
      for (const id of ids) this.reusable.delete(id);
      this.release(pool, ids);
    }
  }

  private flush(): void {
    this.timer = null;
    const batches = [...this.releases.values()];
    this.releases.clear();
    for (const b of batches) {
      this.keepAlive(
        withTimeout(this.pool(b.pool).release(b.ids, b.refund), POOL_CALL_TIMEOUT_MS).catch((e: unknown) =>
          console.error(JSON.stringify({ event: "pool:release_failed", pool: b.pool, error: String(e) })),
        ),
      );
    }
  }
}
