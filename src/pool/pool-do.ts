/**
 * PoolDO: one shared budget (DESIGN.md §1) — a type's `concurrency`, a
 * declared resource pool (concurrency and/or rate), or a `notWhileRunning`
 * guard between two types. Scope objects ask it for permits before they claim
 * (never inside the claim transaction), renew them while their handler calls
 * run, and release them when the attempt ends. A holder that dies stops
 * renewing; its permits lapse, and the alarm hands the slots to the holders
 * that have waited longest.
 *
 * A keyed limit's object (one per key value, `…#<key>`: pool-name.ts) deletes its storage once nothing in it
 * counts any more (`idle`): a million tenants seen once cost no storage and no alarm.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import migrations from "../../migrations/pool/migrations.js";
import { AlarmArm } from "../alarm-arm";
import { systemClock, type Clock } from "../clock";
import type { Env } from "../env";
import { migrateStorage } from "../tables/migrate";
import { keepName, ownName } from "../object-name";
import { Meter, meterRequests } from "../metering/meter";
import { sendUsageWhenIdle, USAGE_CATALOG } from "../metering/usage-sender";
import { keyedParts } from "./pool-name";
import { busiestKeys, KEY_IDLE_KEEP_MS, KeyReporter, keyTotals, noteKey, type KeyFigures, type KeyRow } from "./key-registry";
import { acquire, dropStale, drainsAt, figures, idle, nextWake, pokeAfterWindow, release, renew, setLimits, status, tidy, waitingHolders, type AcquireRequest, type Grant, type PoolLimits, type PoolStatus } from "./permits";

export class PoolDO extends DurableObject<Env> {
  clock: Clock = systemClock;
  private readonly alarmArm: AlarmArm;
  /** For log lines; kept in storage, since an instance its alarm woke cold is not told it (object-name.ts). */
  private readonly name: string | null;
  /** The storage was deleted (an idle keyed object): the tables are made again before the next request. */
  private wiped = false;
  /** A key value's object (`<name>#<key>`): its limit's own object, and the value — told what this one holds. */
  private readonly keyed: { base: string; key: string } | null;
  private readonly reporter = new KeyReporter();
  private readonly meter: Meter;
  /** A key value's object: since when nothing here has counted (in memory: a new instance starts the wait again). */
  private idleSince: number | null = null;
  /** No request has reached this instance yet (its alarm may have woken it cold). */
  private cold = true;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const meter = Meter.install(this, ctx, "pool");
    this.meter = meter;
    sendUsageWhenIdle(meter, (report) => env.CATALOG.getByName(USAGE_CATALOG).usage(report), (p) => ctx.waitUntil(p), () => this.clock.now());
    this.name = ownName(ctx);
    this.keyed = this.name === null ? null : keyedParts(this.name);
    this.alarmArm = new AlarmArm(ctx.storage);
    void ctx.blockConcurrencyWhile(() => meter.setup(() => migrateStorage(ctx.storage, migrations, "pool")));
  }

  private async ready(fromAlarm = false): Promise<void> {
    if (!fromAlarm) this.cold = false;
    if (!this.wiped) return;
    await this.ctx.blockConcurrencyWhile(async () => {
      if (!this.wiped) return;
      // A keyed pool wiped when idle migrates again when its key comes back: setup again, counted as such.
      await this.meter.setup(() => migrateStorage(this.ctx.storage, migrations, "pool"));
      if (this.name !== null) keepName(this.ctx, this.name); // an instance its alarm wakes cold reads it back
      this.wiped = false;
    });
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  async acquire(req: AcquireRequest): Promise<Omit<Grant, "wake">> {
    await this.ready();
    const now = this.clock.now();
    const { wake, ...grant } = this.ctx.storage.transactionSync(() => acquire(this.sql, req, now));
    await this.after(wake, now);
    return grant;
  }

  /** renew returns the permits that were no longer held. */
  async renew(ids: string[], ttlMs: number): Promise<string[]> {
    await this.ready();
    const now = this.clock.now();
    const lost = this.ctx.storage.transactionSync(() => renew(this.sql, ids, ttlMs, now));
    await this.after([], now);
    return lost;
  }

  /** release: the attempts ended (or, with `refund`, never started: their rate spend is given back). */
  async release(ids: string[], refund = false): Promise<void> {
    await this.ready();
    const now = this.clock.now();
    const wake = this.ctx.storage.transactionSync(() => release(this.sql, ids, refund, now));
    await this.after(wake, now);
  }

  /** dropStale: a restarted scope object gives back what its dead instance's pushed calls held. */
  async dropStale(holder: string, epoch: string): Promise<void> {
    await this.ready();
    const now = this.clock.now();
    const wake = this.ctx.storage.transactionSync(() => dropStale(this.sql, holder, epoch, now));
    await this.after(wake, now);
  }

  async status(configured: PoolLimits): Promise<PoolStatus> {
    await this.ready();
    const now = this.clock.now();
    const wake = this.ctx.storage.transactionSync(() => tidy(this.sql, now));
    // Read before `after`: an idle key value's object deletes its storage there.
    const s = status(this.sql, configured, now);
    await this.after(wake, now);
    return s;
  }

  /** setLimits: resize at runtime, persisted here (the config stays the default); wakes waiters that now fit. */
  async setLimits(limits: Partial<Pick<PoolLimits, "concurrency" | "ratePerMinute">>, configured: PoolLimits): Promise<PoolStatus> {
    await this.ready();
    const now = this.clock.now();
    this.ctx.storage.transactionSync(() => setLimits(this.sql, limits));
    const s = status(this.sql, configured, now);
    await this.after(waitingHolders(this.sql), now);
    return s;
  }

  override async alarm(): Promise<void> {
    this.alarmArm.consumed();
    await this.ready(true);
    const now = this.clock.now();
    let wake: string[] = [];
    try {
      wake = this.ctx.storage.transactionSync(() => [...tidy(this.sql, now), ...pokeAfterWindow(this.sql, now)]);
    } catch (e) {
      console.error(JSON.stringify({ event: "pool:alarm_failed", pool: this.name, error: String(e) }));
    }
    await this.after(wake, now);
  }

  /** reportKey: a key value's object tells this one (its limit's own) what it holds (key-registry.ts). */
  async reportKey(key: string, f: KeyFigures): Promise<void> {
    await this.ready();
    const now = this.clock.now();
    this.ctx.storage.transactionSync(() => noteKey(this.sql, key, f, now));
  }

  /** keys: a keyed limit's busy key values, busiest first, a page at a time; and how many there are. */
  async keys(cursor: string | null, limit: number): Promise<{ keys: KeyRow[]; next: string | null; total: { keys: number; active: number } }> {
    await this.ready();
    return { ...busiestKeys(this.sql, cursor, limit), total: keyTotals(this.sql) };
  }

  /** after: poke the holders a slot is kept for, and keep the alarm on the pool's next change. A field: every method is a request (meterRequests). */
  private readonly after = async (wake: string[], now: number): Promise<void> => {
    for (const holder of new Set(wake)) {
      const poke = this.env.SCOPE.getByName(holder)
        .poke(this.name ?? undefined)
        .catch((e: unknown) => console.error(JSON.stringify({ event: "pool:poke_failed", holder, error: String(e) })));
      this.ctx.waitUntil(poke);
    }
    if (this.keyed === null) {
      const next = nextWake(this.sql, now);
      await this.alarmArm.set(next === null ? null : Math.max(next, now + 1));
      return;
    }
    // A key value's object: its limit's own object hears what it holds; once nothing here has counted for a while, it
    // keeps nothing (a tenant busy again within KEY_IDLE_KEEP_MS finds its tables made).
    const f = figures(this.sql);
    this.report(f, now);
    // An instance its alarm woke cold that finds nothing held has no memory of since when: it has been idle at least
    // since its last instance went (an idle object is evicted long before a minute passes), so it does not start the
    // minute again — that re-armed the alarm every minute for good.
    if (!idle(this.sql, now)) this.idleSince = null;
    else if (this.idleSince === null) this.idleSince = this.cold ? now - KEY_IDLE_KEEP_MS : now;
    this.cold = false;
    if (this.idleSince !== null && now >= this.idleSince + KEY_IDLE_KEEP_MS) {
      this.report(f, now, true);
      await this.alarmArm.set(null);
      await this.ctx.storage.deleteAll();
      this.wiped = true;
      this.idleSince = null;
      return;
    }
    const times = [nextWake(this.sql, now), drainsAt(this.sql, now), this.reporter.dueAt(f), this.idleSince === null ? null : this.idleSince + KEY_IDLE_KEEP_MS].filter((t): t is number => t !== null);
    await this.alarmArm.set(times.length === 0 ? null : Math.max(Math.min(...times), now + 1));
  };

  private report(f: KeyFigures, now: number, force = false): void {
    const send = this.keyed && this.reporter.take(f, now, force);
    if (!send || !this.keyed) return;
    const { base, key } = this.keyed;
    this.ctx.waitUntil(
      this.env.POOL.getByName(base)
        .reportKey(key, send)
        .catch((e: unknown) => {
          this.reporter.failed();
          console.error(JSON.stringify({ event: "pool:key_report_failed", pool: this.name, error: String(e) }));
        }),
    );
  }
}

meterRequests(PoolDO);
