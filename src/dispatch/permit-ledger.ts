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
 * @module
 */
import { POOL_CALL_TIMEOUT_MS, takePermits, withTimeout, type PermitStep, type PoolApi, type Taken } from "../pool/permit-plan";

export interface Permit {
  pool: string;
  id: string;
}

export class PermitLedger {
  private readonly releases = new Map<string, { pool: string; ids: string[]; refund: boolean }>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly pool: (name: string) => PoolApi,
    private readonly keepAlive: (p: Promise<unknown>) => void,
  ) {}

  /** take: every permit of the plan for up to `want` jobs; what a refused step had granted goes back refunded. */
  take(plan: readonly PermitStep[], ask: { holder: string; want: number; ttlMs: number }): Promise<Taken> {
    return takePermits(plan, ask, this.pool, (pool, ids) => this.release(pool, ids, true));
  }

  /** release gives permits back; `refund` when their attempts never started (their rate spend is returned). */
  release(pool: string, ids: readonly string[], refund = false): void {
    if (ids.length === 0) return;
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
