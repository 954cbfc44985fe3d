/**
 * PoolDO: one shared budget (DESIGN.md §1) — a type's `concurrency`, a
 * declared resource pool (concurrency and/or rate), or a `notWhileRunning`
 * guard between two types. Scope objects ask it for permits before they claim
 * (never inside the claim transaction), renew them while their handler calls
 * run, and release them when the attempt ends. A holder that dies stops
 * renewing; its permits lapse, and the alarm hands the slots to the holders
 * that have waited longest.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import migrations from "../../migrations/pool/migrations.js";
import { AlarmArm } from "../alarm-arm";
import { systemClock, type Clock } from "../clock";
import type { Env } from "../env";
import { migrateStorage } from "../tables/migrate";
import { ownName } from "../object-name";
import { Meter, meterRequests } from "../metering/meter";
import { sendUsageWhenIdle, USAGE_CATALOG } from "../metering/usage-sender";
import { acquire, nextWake, pokeAfterWindow, release, renew, setLimits, status, tidy, waitingHolders, type AcquireRequest, type Grant, type PoolLimits, type PoolStatus } from "./permits";

export class PoolDO extends DurableObject<Env> {
  clock: Clock = systemClock;
  private readonly alarmArm: AlarmArm;
  /** For log lines; kept in storage, since an instance its alarm woke cold is not told it (object-name.ts). */
  private readonly name: string | null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    sendUsageWhenIdle(Meter.install(this, ctx, "pool"), (kind, u) => env.CATALOG.getByName(USAGE_CATALOG).usage(kind, u), (p) => ctx.waitUntil(p));
    this.name = ownName(ctx);
    this.alarmArm = new AlarmArm(ctx.storage);
    void ctx.blockConcurrencyWhile(() => migrateStorage(ctx.storage, migrations, "pool"));
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  async acquire(req: AcquireRequest): Promise<Omit<Grant, "wake">> {
    const now = this.clock.now();
    const { wake, ...grant } = this.ctx.storage.transactionSync(() => acquire(this.sql, req, now));
    await this.after(wake, now);
    return grant;
  }

  /** renew returns the permits that were no longer held. */
  async renew(ids: string[], ttlMs: number): Promise<string[]> {
    const now = this.clock.now();
    const lost = this.ctx.storage.transactionSync(() => renew(this.sql, ids, ttlMs, now));
    await this.after([], now);
    return lost;
  }

  /** release: the attempts ended (or, with `refund`, never started: their rate spend is given back). */
  async release(ids: string[], refund = false): Promise<void> {
    const now = this.clock.now();
    const wake = this.ctx.storage.transactionSync(() => release(this.sql, ids, refund, now));
    await this.after(wake, now);
  }

  async status(configured: PoolLimits): Promise<PoolStatus> {
    const now = this.clock.now();
    const wake = this.ctx.storage.transactionSync(() => tidy(this.sql, now));
    await this.after(wake, now);
    return status(this.sql, configured, now);
  }

  /** setLimits: resize at runtime, persisted here (the config stays the default); wakes waiters that now fit. */
  async setLimits(limits: Partial<PoolLimits>, configured: PoolLimits): Promise<PoolStatus> {
    const now = this.clock.now();
    this.ctx.storage.transactionSync(() => setLimits(this.sql, limits));
    await this.after(waitingHolders(this.sql), now);
    return status(this.sql, configured, now);
  }

  override async alarm(): Promise<void> {
    this.alarmArm.consumed();
    const now = this.clock.now();
    let wake: string[] = [];
    try {
      wake = this.ctx.storage.transactionSync(() => [...tidy(this.sql, now), ...pokeAfterWindow(this.sql, now)]);
    } catch (e) {
      console.error(JSON.stringify({ event: "pool:alarm_failed", pool: this.name, error: String(e) }));
    }
    await this.after(wake, now);
  }

  /** after: poke the holders a slot is kept for, and keep the alarm on the pool's next change. A field: every method is a request (meterRequests). */
  private readonly after = async (wake: string[], now: number): Promise<void> => {
    for (const holder of new Set(wake)) {
      const poke = this.env.SCOPE.getByName(holder)
        .poke()
        .catch((e: unknown) => console.error(JSON.stringify({ event: "pool:poke_failed", holder, error: String(e) })));
      this.ctx.waitUntil(poke);
    }
    const next = nextWake(this.sql, now);
    await this.alarmArm.set(next === null ? null : Math.max(next, now + 1));
  };
}

meterRequests(PoolDO);
