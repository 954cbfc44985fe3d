/**
 * CatalogDO: the directory of homes (DESIGN.md §1). Scope objects send it
 * summaries after they change; the coordinator asks it which homes to claim
 * from, list and prune, and for global stats. One object: its rate is a
 * ceiling that bench/ measures and the README states.
 *
 * @module
 */
import { ownName } from "../object-name";
import { catalogName } from "./shards";
import { BudgetPass } from "./budget-pass";
import { health as budgetHealth, knownTypes, spend, type SpendQuery } from "./budgets";
import type { BudgetView } from "../job/schemas/budgets";
import { page, record, type AuditRecord } from "./audit-store";
import type { AuditEntry, AuditQuery } from "../job/schemas/audit";
import { DurableObject } from "cloudflare:workers";
import migrations from "../../migrations/catalog/migrations.js";
import { systemClock, type Clock } from "../clock";
import type { Env } from "../env";
import type { JobState, TerminalState } from "../job/states";
import { migrateStorage } from "../tables/migrate";
import type { HomeSummary } from "../scope/report/summary";
import type { Stats, StatsResult } from "../job/schemas";
import { MINUTE_MS, minuteOf, type Counters, type MinuteCounters } from "../metrics/counters";
import { type HomeFilter, applyReport, busiestHomes, busyType, listHomes, listHomesWithTerminal, pickHomesForClaim, ServedHomes, stats, statsByType } from "./catalog-store";
import { metricSeries, metricTotals } from "./metrics-store";
import { ClaimedTypes, unhandledTypes } from "./claimed-types";
import { loadConfig } from "../config/load";
import { type PauseSync, pauseChanges, pausedTypes, promise, setPaused } from "./pause-store";
import { withTimeout } from "../deadlines";
import { POOL_CALL_TIMEOUT_MS } from "../pool/permit-plan";
import type { QueueConfig } from "../config/schema";
import { Meter, meterRequests } from "../metering/meter";
import type { KindUsage, MinuteUsage, UsageReport } from "../metering/usage";
import { AlarmArm } from "../alarm-arm";
import { UsageBook, usageMinutes, usageTotals } from "./usage-store";

/**
 * The catalog's own usage is written by its alarm this long after a request other than that alarm (usage-store.ts;
 * docs/operating.md "What the meters count"): well before an idle object is evicted.
 */
export const CATALOG_USAGE_AFTER_MS = 5_000;

export interface RankedHome {
  home: string;
  /** max(oldest due, last served): the smaller, the longer it has waited. */
  waited: number;
}

export interface Overview {
  at: number;
  types: (Stats & { type: string; unhandled: boolean })[];
  totals: (Counters & { type: string })[];
  minutes: MinuteCounters[];
  /** What each object kind used since the catalog began (its storage rows, requests, active time). */
  usage: KindUsage[];
  /** The same per minute, over the same minutes. */
  usageMinutes: MinuteUsage[];
}

/** How many homes a pause notice goes to at once. */
const PAUSE_NOTICE_FANOUT = 32;

export class CatalogDO extends DurableObject<Env> {
  clock: Clock = systemClock;
  private readonly config: QueueConfig;
  private readonly claimed = new ClaimedTypes();
  private readonly servedHomes = new ServedHomes();
  private readonly meter: Meter;
  private readonly alarmArm: AlarmArm;
  /** The requests of this instance's own usage its alarm last wrote: more since means a request other than that alarm. */
  private requestsTaken = 0;
  /** That alarm is set (by this instance): later requests leave it where it is. */
  private usageArmed = false;
  /** Usage reports taken and not written yet (usage-store.ts): written by the alarm. */
  private readonly usageHeld = new UsageBook();
  private pass: BudgetPass | undefined;
  private readonly name: string | null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.meter = Meter.install(this, ctx, "catalog");
    this.alarmArm = new AlarmArm(ctx.storage);
    this.config = loadConfig(env);
    // Its own name, kept: an instance its alarm wakes cold has none in its id (object-name.ts), and a shard that took
    // itself for the main object would check the budgets too.
    this.name = ownName(ctx);
    const meter = this.meter;
    void ctx.blockConcurrencyWhile(() => meter.setup(() => migrateStorage(ctx.storage, migrations, "catalog")));
    // The first request after the last usage alarm (other than that alarm) arms the next, 5 s on; requests meanwhile
    // leave it where it is — no alarm write per request — and the alarm's own writes wait for the one after.
    meter.onIdle = () => {
      if (this.usageArmed || meter.total.requests <= this.requestsTaken) return;
      this.usageArmed = true;
      void this.alarmArm.set(this.clock.now() + CATALOG_USAGE_AFTER_MS).catch(() => (this.usageArmed = false));
    };
  }

  /** Who answers pause syncs (pause-store.ts, PauseSync.from): this shard's name and the shard count. */
  private get shardName(): string {
    return `${this.name ?? catalogName(0)}/${this.config.catalogShards}`;
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /**
   * report: take a home's summary in one transaction, and hold what the home's instance used (usage-store.ts); the
   * answer is the pause state, with this shard's promise to tell the home of changes renewed.
   */
  async report(summary: HomeSummary): Promise<PauseSync> {
    const now = this.clock.now();
    const answer = this.ctx.storage.transactionSync(() => {
      applyReport(this.sql, summary);
      return promise(this.sql, summary.home, this.shardName, now);
    });
    // Held until this shard's alarm writes it (usage-store.ts UsageBook), which the request arms (meter.onIdle).
    if (summary.usage) this.usageHeld.hold(this.ctx.storage, summary.usage, now);
    return answer;
  }

  /** usage: an object that sends no summaries reports what its instance used (metering/usage-sender.ts); held as a summary's. */
  async usage(report: UsageReport): Promise<void> {
    this.usageHeld.hold(this.ctx.storage, report, this.clock.now());
  }

  /**
   * alarm: write the usage held — the reports' since the last alarm and this shard's own; now and then, drop stale
   * senders and usage minutes. The main object then checks the spend caps with what is written (budget-keeper.ts),
   * and comes back when a window holding a pause turns.
   */
  override async alarm(): Promise<void> {
    this.alarmArm.consumed();
    this.usageArmed = false;
    const now = this.clock.now();
    const own = this.meter.report();
    this.requestsTaken = own.total.requests;
    this.usageHeld.take(this.sql, own, now);
    this.usageHeld.commit(this.ctx.storage, now);
    const turn = await this.budgetPass.run(now);
    // Every pass, checked or not: a usage alarm armed since replaced the turn's, and this pass is that alarm.
    if (turn !== null && !this.usageArmed) await this.alarmArm.set(turn);
  }

  /** checkBudgets: the spend caps against what every shard counted (budget-keeper.ts); answers when a pause's window turns. */
  async checkBudgets(): Promise<number | null> {
    return this.budgetPass.keeper.check(this.clock.now());
  }

  /** budgetViews: each budget's window: its spend, its crossings, what it holds paused (GET /v1/budgets). */
  async budgetViews(): Promise<BudgetView[]> {
    return this.budgetPass.keeper.views(this.clock.now());
  }

  /** liftBudget: resume what the budget paused, for the rest of its window (POST /v1/budgets/{name}/lift). */
  async liftBudget(name: string): Promise<BudgetView> {
    return this.budgetPass.keeper.lift(name, this.clock.now());
  }

  /** budgetPing: another shard took reports since; this request arms this object's alarm, which checks the budgets. */
  async budgetPing(): Promise<void> {}

  /** budgetHealth: what /v1/health says of the budgets, from their states alone: no sums, no other shard asked. */
  async budgetHealth(): Promise<{ paused: string[]; warned: string[] }> {
    return budgetHealth(this.sql, this.config.budgets, this.clock.now());
  }

  /** budgetForget: an operator paused or resumed the type by hand (coordinator/overview.ts); no budget holds it now. */
  async budgetForget(type: string): Promise<void> {
    if (this.config.budgets.length > 0) this.budgetPass.keeper.forget(type);
  }

  /** knownTypesOf: the types this shard knows of, for the main object's queue budget crossing its hard limit. */
  async knownTypesOf(): Promise<string[]> {
    return knownTypes(this.sql);
  }

  /** spendOf: this shard's sums for the main object's budget check. */
  async spendOf(queries: SpendQuery[]): Promise<number[]> {
    return spend(this.sql, queries);
  }

  /** The spend caps' part of this shard (budget-pass.ts); `enabled` is the cost harness's switch. */
  get budgetPass(): BudgetPass {
    this.pass ??= new BudgetPass({
      sql: this.sql,
      transact: (fn) => this.ctx.storage.transactionSync(fn),
      config: this.config,
      env: this.env,
      name: this.name ?? catalogName(0),
      pauseHere: (type, paused) => this.pauseHere(type, paused),
    });
    return this.pass;
  }

  /** audit: record an operator action in the audit list (audit-store.ts); the main catalog object holds it. */
  async audit(entry: AuditRecord): Promise<void> {
    const now = this.clock.now();
    this.ctx.storage.transactionSync(() => record(this.sql, entry, now, this.config.retention.auditMs));
  }

  /** auditPage: a page of the audit list, newest first. */
  async auditPage(q: AuditQuery): Promise<{ items: AuditEntry[]; next: number | null }> {
    return page(this.sql, q);
  }

  /** pauseSync: a home whose promise lapsed asks before it dispatches (scope/jobs/pause-gate.ts). */
  async pauseSync(home: string): Promise<PauseSync> {
    const now = this.clock.now();
    return this.ctx.storage.transactionSync(() => promise(this.sql, home, this.shardName, now));
  }

  /**
   * setPaused: record the change, then tell every home promised it, PAUSE_NOTICE_FANOUT at a time. Answers
   * how many could not be told: each of those asks again when its promise lapses, at most PAUSE_PROMISE_MS later.
   */
  async setPaused(type: string, paused: boolean): Promise<{ told: number; untold: string[] }> {
    return this.pauseHere(type, paused);
  }

  /** pauseHere: setPaused, not metered as a request of its own (the budgets' pauses, from this object's alarm). */
  private async pauseHere(type: string, paused: boolean): Promise<{ told: number; untold: string[] }> {
    const now = this.clock.now();
    const { notice, homes } = this.ctx.storage.transactionSync(() => setPaused(this.sql, type, paused, this.shardName, now));
    const untold: string[] = [];
    for (let i = 0; i < homes.length; i += PAUSE_NOTICE_FANOUT) {
      await Promise.all(
        homes.slice(i, i + PAUSE_NOTICE_FANOUT).map((home) =>
          // Bounded: one slow home must not hold the pause's answer (it learns when its promise lapses).
          withTimeout(this.env.SCOPE.getByName(home).applyPause(notice), POOL_CALL_TIMEOUT_MS)
            .catch((e: unknown) => {
              untold.push(home);
              console.error(JSON.stringify({ event: "pause:notice_failed", home, type, error: String(e) }));
            }),
        ),
      );
    }
    return { told: homes.length - untold.length, untold };
  }

  /** pauses: every type paused here at some time, with whether it is now (GET /v1/types). */
  async pauses(): Promise<{ type: string; paused: boolean; changedAt: number }[]> {
    return pauseChanges(this.sql);
  }

  /** pickHomes: this shard's homes for a pull claim, best first; `mark` records the first `limit` as served. */
  async pickHomes(types: string[] | null, exclude: string[], limit: number, spare: number, mark = true): Promise<RankedHome[]> {
    const now = this.clock.now();
    return this.ctx.storage.transactionSync(() => {
      this.claimed.record(this.sql, types, now);
      // A paused type's due work is not handed out: ranking homes by it would send claims where they get nothing.
      return pickHomesForClaim(this.sql, this.servedHomes, types, [...exclude, ...pausedTypes(this.sql)], limit, spare, now, mark);
    });
  }

  /** served: a sharded pick kept these homes of this shard (catalog/shards.ts). Memory only. */
  async served(homes: string[]): Promise<void> {
    this.servedHomes.mark(homes, this.clock.now());
  }

  async busyType(types: string[]): Promise<string | null> {
    return busyType(this.sql, types, this.clock.now());
  }

  async stats(type: string | null): Promise<StatsResult> {
    const now = this.clock.now();
    return { ...stats(this.sql, type, now), unhandledTypes: unhandledTypes(this.sql, this.config.types, type, now) };
  }

  /** overview: per type (or one), counts and lag from the summaries, totals since the catalog began, and the last `minutes` minutes of the series. */
  async overview(minutes: number, type: string | null): Promise<Overview> {
    const now = this.clock.now();
    const from = minuteOf(now) - (minutes - 1) * MINUTE_MS;
    const unhandled = new Set(unhandledTypes(this.sql, this.config.types, type, now));
    const types = statsByType(this.sql, type, now).map((t) => ({ ...t, unhandled: unhandled.has(t.type) }));
    // Only what is written: a total read twice never falls (what is not written yet comes within seconds).
    return {
      at: now,
      types,
      totals: metricTotals(this.sql, type),
      minutes: metricSeries(this.sql, from, type),
      usage: usageTotals(this.sql),
      usageMinutes: usageMinutes(this.sql, from),
    };
  }

  async busiestHomes(limit: number): Promise<(Stats & { home: string })[]> {
    return busiestHomes(this.sql, limit, this.clock.now());
  }

  async listHomes(filter: HomeFilter, after: string, inclusive: boolean, limit: number): Promise<string[]> {
    return listHomes(this.sql, filter, after, inclusive, limit);
  }

  async homesWithTerminal(states: TerminalState[], after: string, limit: number): Promise<string[]> {
    return listHomesWithTerminal(this.sql, states, after, limit);
  }
}

meterRequests(CatalogDO);
