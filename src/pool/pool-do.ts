/**
 * PoolDO: one shared budget (DESIGN.md §1). Scope objects ask it for permits
 * before they claim (never inside the claim transaction), renew them while
 * their handler calls run, and release them when the attempt ends. A holder
 * that dies stops renewing; its permits lapse and the alarm hands the slots to
 * the holders waiting longest.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import migrations from "../../migrations/pool/migrations.js";
import { AlarmArm } from "../alarm-arm";
import { systemClock, type Clock } from "../clock";
import type { Env } from "../env";
import { migrateStorage } from "../schema/migrate";
import { acquire, activeCount, expire, nextExpiry, release, renew, type Grant } from "./permits";

export class PoolDO extends DurableObject<Env> {
  clock: Clock = systemClock;
  private readonly alarmArm: AlarmArm;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarmArm = new AlarmArm(ctx.storage);
    void ctx.blockConcurrencyWhile(() => migrateStorage(ctx.storage, migrations, "pool"));
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  async acquire(holder: string, want: number, limit: number, ttlMs: number): Promise<Omit<Grant, "wake">> {
    const now = this.clock.now();
    const { wake, ...grant } = this.ctx.storage.transactionSync(() => acquire(this.sql, holder, want, limit, ttlMs, now));
    await this.after(wake);
    return grant;
  }

  /** renew returns the permits that were no longer held. */
  async renew(ids: string[], ttlMs: number): Promise<string[]> {
    const lost = this.ctx.storage.transactionSync(() => renew(this.sql, ids, ttlMs, this.clock.now()));
    await this.after([]);
    return lost;
  }

  async release(ids: string[]): Promise<void> {
    const wake = this.ctx.storage.transactionSync(() => release(this.sql, ids, this.clock.now()));
    await this.after(wake);
  }

  async active(): Promise<number> {
    return activeCount(this.sql);
  }

  override async alarm(): Promise<void> {
    this.alarmArm.consumed();
    let wake: string[] = [];
    try {
      wake = this.ctx.storage.transactionSync(() => expire(this.sql, this.clock.now()));
    } catch (e) {
      console.error(JSON.stringify({ event: "pool:alarm_failed", pool: this.ctx.id.name, error: String(e) }));
    }
    await this.after(wake);
  }

  /** after: wake the holders a freed slot is for, and keep the alarm on the next permit expiry. */
  private async after(wake: string[]): Promise<void> {
    for (const holder of wake) {
      const poke = this.env.SCOPE.getByName(holder)
        .poke()
        .catch((e: unknown) => console.error(JSON.stringify({ event: "pool:poke_failed", holder, error: String(e) })));
      this.ctx.waitUntil(poke);
    }
    await this.alarmArm.set(nextExpiry(this.sql));
  }
}
