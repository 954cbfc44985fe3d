/**
 * The pool permits of pulled leases over their life (pull-permits.ts says how
 * they are taken and kept in `job_permit`): renewed with the lease, returned
 * once no running attempt of that lease holds them, refunded when the lease
 * was given back unrun. Every call to a pool is bounded and never throws: a
 * release lost or refused lapses with the permit's own TTL.
 *
 * @module
 */
import { withTimeout } from "../../deadlines";
import { guarded, POOL_CALL_TIMEOUT_MS, type PoolApi } from "../../pool/permit-plan";
import { KeyTurns } from "../../pool/key-turns";
import type { JobRow } from "../jobs/job-row";
import { anyPermits, permitsOfLease, pullClaim, returnable, type PullClaimDeps } from "./pull-permits";
import type { ClaimRequest } from "../jobs/claim";
import type { HomeStore } from "../jobs/home-store";

export interface LeasePermitDeps {
  store: HomeStore;
  pool(name: string): PoolApi;
  now(): number;
  keepAlive(p: Promise<unknown>): void;
}

export class LeasePermits {
  /** Some job_permit row may exist here (unknown after a restart, so true): while false, the return pass is skipped. */
  private held = true;
  /** Whose turn it is among keyed types' key values in pull claims (pool/key-turns.ts); a pool's poke ends a wait. */
  readonly turns = new KeyTurns();

  constructor(private readonly deps: LeasePermitDeps) {}

  /** claim: a pull claim, guarded types taking their permits first (pull-permits.ts). */
  async claim(req: ClaimRequest, rest: Pick<PullClaimDeps, "holder" | "busyType">): Promise<JobRow[]> {
    const { store } = this.deps;
    const rows = await pullClaim(
      { store, ...rest, turns: this.turns, pool: this.deps.pool, now: this.deps.now, giveBack: (pool, ids) => this.deps.keepAlive(this.giveBack(pool, ids, true)) },
      req,
    );
    if (rows.some((r) => guarded(store.config, r.type))) this.held = true;
    return rows;
  }

  /** renew: a pulled attempt's heartbeat keeps its permits as long as its lease. */
  async renew(id: string, token: string, ttlMs: number): Promise<void> {
    if (!this.held) return;
    for (const [pool, ids] of permitsOfLease(this.deps.store.sql, id, token)) {
      try {
        const lost = await withTimeout(this.deps.pool(pool).renew(ids, ttlMs), POOL_CALL_TIMEOUT_MS);
        // Only after heartbeats stalled past the permit's TTL, when the lease itself has lapsed: the reap pass ends the attempt.
        if (lost.length > 0) console.warn(JSON.stringify({ event: "pool:permits_lost", pool, job: id, count: lost.length }));
      } catch (e) {
        console.error(JSON.stringify({ event: "pool:renew_failed", pool, job: id, error: String(e) }));
      }
    }
  }

  /**
   * returnFree: give back every permit no running attempt of its lease holds any more; those of `refundLease`
   * (a lease given back unrun) with their rate spend refunded. Awaited by settles: once complete, fail or release
   * answers, the pull worker's slot is free for its next claim.
   */
  async returnFree(refundLease: { id: string; token: string } | null): Promise<void> {
    if (!this.held) return;
    const { store } = this.deps;
    // The lease's permit rows outlive its release until the pass below takes them, so they are read here, after the write.
    const unrun = refundLease ? permitsOfLease(store.sql, refundLease.id, refundLease.token) : new Map<string, string[]>();
    const taken = returnable(store, this.deps.now());
    this.held = anyPermits(store.sql);
    const back: Promise<void>[] = [];
    for (const [pool, ids] of taken) {
      const refunded = new Set(unrun.get(pool) ?? []);
      back.push(this.giveBack(pool, ids.filter((i) => refunded.has(i)), true), this.giveBack(pool, ids.filter((i) => !refunded.has(i)), false));
    }
    await Promise.all(back);
  }

  private async giveBack(pool: string, ids: string[], refund: boolean): Promise<void> {
    if (ids.length === 0) return;
    await withTimeout(this.deps.pool(pool).release(ids, refund), POOL_CALL_TIMEOUT_MS).catch((e: unknown) =>
      console.error(JSON.stringify({ event: "pool:release_failed", pool, error: String(e) })),
    );
  }
}
