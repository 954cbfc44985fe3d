/**
 * The parts of one scope object: its store, the core's own parts (the pause
 * gate, the wake-up's memo) and the list of its capabilities
 * (capability.ts), which every walk — what follows a write (follow-ups.ts),
 * the wake-up (wake.ts), the alarm (alarm-pass.ts), the start — takes in the
 * list's order. `ScopeDO` (scope-do.ts) is the RPC shell over this.
 *
 * @module
 */
import { Errors } from "./errors/errors";
import { stubsOf } from "../stubs";
import migrations from "../../migrations/scope/migrations.js";
import baseline from "../../migrations/scope/baseline.sql";
import { AlarmArm } from "../alarm-arm";
import type { Clock } from "../clock";
import { loadConfig } from "../config/load";
import { lensOf } from "../sealing/lens";
import type { Env } from "../env";
import { migrateStorage } from "../tables/migrate";
import { ownName } from "../object-name";
import type { HandlerEntrypoint, Journal } from "../job/handler-contract";
import { withTimeout } from "../deadlines";
import { POOL_CALL_TIMEOUT_MS } from "../pool/permit-plan";
import { Catalogs } from "../catalog/shards";
import type { Meter } from "../metering/meter";
import type { Capability } from "./jobs/capability";
import { alarmPass } from "./alarm-pass";
import { FollowUps } from "./follow-ups";
import { nextWakeAt, wakeStatement } from "./wake";
import { changed, type Written } from "./jobs/changes";
import type { ClaimRequest } from "./jobs/claim";
import type { JobRow } from "./jobs/job-row";
import { journalsOf } from "./workflow/steps";
import { Core } from "./jobs/core";
import { ExpiryMemo } from "./jobs/expiry-memo";
import { CountDebt } from "./jobs/count-debt";
import { recount } from "./jobs/tallies";
import { untoldChanges } from "./report/catalog-report";
import { Feed } from "./jobs/feed";
import { joinHooks } from "./jobs/job-hooks";
import { markKeyedJobs } from "./jobs/keyed-claim";
import { markOrderedJobs } from "./jobs/ordered-repair";
import { releaseHeld } from "./jobs/held-retries";
import { PauseGate } from "./jobs/pause-gate";
import { PushedLeases } from "./jobs/pushed-leases";
import { WakeMemo, type WakeRow } from "./jobs/wake-memo";
import { BatchPart } from "./batches/batch-part";
import { Pull } from "./pull/pull";
import { Push } from "./push/push";
import { Report } from "./report/report";
import { buildSummary, type HomeSummary } from "./report/summary";
import { Retention } from "./retention/retention";
import { Watching } from "./watching/watching";
import { RecentEvents } from "./workflow/recent-events";
import { Workflow } from "./workflow/workflow";
import type { WorkflowStore } from "./workflow/workflow-store";
import { applyOwed } from "./workflow/deliveries";
import type { OwedItem } from "./workflow/outbox";
import { writes } from "./writes";

/** The store as the shell holds it: the core's, and what each capability keeps beside it. */
export type ScopeStore = WorkflowStore;

/** What the shell lends its parts: the clock and randomness tests swap in. */
export interface ScopeHost {
  clock: Clock;
  random(): number;
}

export class ScopeParts {
  readonly store: ScopeStore;
  readonly alarmArm: AlarmArm;
  readonly catalogs: Catalogs;
  /** The due types and the wake-up's row, kept while no write or lapse of time can change them (wake-memo.ts). */
  readonly memo: WakeMemo;
  readonly core: Core;
  readonly batches: BatchPart;
  readonly pull: Pull;
  readonly workflow: Workflow;
  readonly push: Push;
  readonly watching: Watching;
  readonly errors: Errors;
  readonly report: Report;
  /**
   * The capabilities, in the order of every walk: what a write ended is noted (retention, push) before it is told
   * (watching); permits go back (pull) before the outbox sends (workflow); a report is kicked (report) last, and the
   * alarm's report goes out after every other share of the pass. A new capability is one entry here.
   */
  readonly capabilities: readonly Capability[];
  readonly followUps: FollowUps;
  private pause_: PauseGate | null = null;
  /** This object's name, kept in its storage at its first named call (object-name.ts). */
  private name: string | null;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly host: ScopeHost,
    /** What this object is billed for (metering/meter.ts): its instance's total goes with each summary. */
    private readonly meter: Meter,
  ) {
    const sql = ctx.storage.sql;
    this.name = ownName(ctx);
    const now = () => this.now();
    const keepAlive = (p: Promise<unknown>) => ctx.waitUntil(p);
    const rearm = () => this.arm(this.now());
    const config = loadConfig(env);
    const pool = stubsOf(env.POOL);
    // Live subscriptions here now: only then are steps and log lines gathered for them (feed.ts).
    const watched = () => this.watching.watchers.count > 0;
    const feed = new Feed(watched);
    const debt = new CountDebt();
    const parts = this;
    this.store = {
      sql,
      // What a transaction that rolled back gathered, owed or paid goes with it (feed.ts, jobs/count-debt.ts).
      atomic: (fn) => {
        const mark = feed.mark();
        const owed = debt.mark();
        const erred = parts.errors?.notes.mark();
        // The catalog's persisted mark rolls back with the transaction that wrote it: kept in memory, a later owing
        // write would not write it again, and a restart would not know to recount (jobs/count-debt.ts).
        const dirty = parts.report.started ? parts.report.reporter.dirtyMark() : undefined;
        try {
          return ctx.storage.transactionSync(fn);
        } catch (e) {
          feed.rollback(mark);
          debt.rollback(owed);
          if (erred !== undefined) parts.errors.notes.rollback(erred);
          if (dirty !== undefined) parts.report.reporter.restore(dirty);
          throw e;
        }
      },
      config,
      // A bad EDGEQUEUE_ENCRYPTION_KEYS throws here: the object refuses to run rather than keep in the clear what it was told to seal.
      lens: lensOf(env, config),
      random: () => host.random(),
      touched: (at) => this.report.reporter.touched(at),
      get scoped() {
        return parts.name?.startsWith("scope:") ?? false;
      },
      // The capabilities, built over this store, give the hooks: joined below, once the list is made.
      get hooks() {
        return hooks;
      },
      feed,
      pushed: new PushedLeases(),
      expiries: new ExpiryMemo(sql),
      debt,
      recentEvents: new RecentEvents(),
      queueToken: env.QUEUE_TOKEN ?? null,
    };
    const store = this.store;
    this.alarmArm = new AlarmArm(ctx.storage);
    this.catalogs = new Catalogs(env.CATALOG, config.catalogShards);
    this.core = new Core(store, () => this.pause);
    this.batches = new BatchPart({ store, now, home: () => this.name, decider: (name) => env.SCOPE.getByName(name), commit: (c, at) => this.followUps.run(c, at) });
    this.pull = new Pull({ store, pool, now, keepAlive, notify: (type) => env.WAIT.getByName(`wait:${type}`).notify(this.home) });
    this.workflow = new Workflow({
      store,
      now,
      keepAlive,
      rearm,
      // What this object owes itself (a scoped child of a scoped parent) is applied here, not sent round.
      deliver: (home, items) => (home === this.name ? this.deliver(items) : env.SCOPE.getByName(home).deliver(items)),
    });
    this.watching = new Watching({ ctx, env, config, now, keepAlive, rearm, home: () => this.name ?? "?" });
    this.memo = new WakeMemo(sql, (at) => this.readWake(at));
    const binding = (name: string) => (env as unknown as Record<string, unknown>)[name];
    this.push = new Push({
      store,
      memo: this.memo,
      now,
      home: () => this.home,
      keepAlive,
      handler: (name) => binding(name) as HandlerEntrypoint,
      pool,
      pauseFresh: (at) => this.pauseFresh(at),
      invocationsPerCall: this.watching.events.invocationsPerCall,
      busyType: (types) => this.catalogs.busyType(types),
      write: (op) => this.write(op),
      commit: (c, at) => this.followUps.run(c, at),
      progress: async (items) => void (await this.write((at) => writes.progress(store, items, at))),
      watched,
    });
    this.errors = new Errors(store);
    this.report = new Report({
      sql,
      now,
      build: (unreportedSince) => buildSummary(store, this.home, this.now(), unreportedSince),
      send: (summary) => this.sendSummary(summary),
      keepAlive,
      rearm,
      home: () => this.name,
      pushTypes: config.pushTypes,
      waitedOn: config.waitedOn,
    });
    this.capabilities = [this.core, new Retention(store), this.batches, this.pull, this.workflow, this.push, this.watching, this.errors, this.report];
    const hooks = joinHooks(this.capabilities.flatMap((c) => (c.hooks ? [c.hooks] : [])));
    this.wakeSql = wakeStatement(this.capabilities);
    this.followUps = new FollowUps(this.capabilities, { feed, arm: (at) => this.arm(at) });
  }

  /** The one wake-up statement, assembled once from the capabilities' columns (wake.ts). */
  private readonly wakeSql: string;

  now(): number {
    return this.host.clock.now();
  }

  get pause(): PauseGate {
    if (this.pause_ === null) throw new Error("the scope object has not started");
    return this.pause_;
  }

  /** find: the capability of this class in the list (a door of ScopeDO reaches a capability that keeps no field here). */
  find<T extends Capability>(kind: abstract new (...args: never[]) => T): T {
    const found = this.capabilities.find((c): c is T => c instanceof kind);
    if (!found) throw new Error(`no ${kind.name} capability in the list`);
    return found;
  }

  /** start: the storage migrated, the capabilities started, and the last instance's orphans given back. */
  async start(): Promise<void> {
    const { ctx, store } = this;
    const { sql, config } = store;
    // A new object is made from the baseline at once (tables/migrate.ts): what a new tenant's setup writes.
    await this.meter.setup(() => migrateStorage(ctx.storage, migrations, "scope", baseline));
    // The last instance left changes untold: it may have died owing counts (jobs/count-debt.ts) — read them again,
    // before anything reads them (the ordered marks below read `running`).
    if (untoldChanges(sql)) recount(sql);
    // The last instance's held retries have no timer now: back to the claim index, before anything reads it (jobs/held-retries.ts).
    releaseHeld(sql);
    markOrderedJobs(sql, config);
    markKeyedJobs(sql, config);
    this.pause_ = new PauseGate({
      sql,
      atomic: (fn) => ctx.storage.transactionSync(fn),
      now: () => this.now(),
      // Bounded: a claim awaits this, and a hung catalog must not hang it (the gate then goes on with its last set).
      ask: () => withTimeout(this.catalogs.pauseSync(this.home), POOL_CALL_TIMEOUT_MS),
      keepAlive: (p) => ctx.waitUntil(p),
      synced: () => {
        // Held-back or resumed work: parked claims of pulled types and the dispatcher look again, and the alarm is
        // set anew — while the type was paused, its delayed jobs were left out of every wake-up.
        const at = this.now();
        this.pull.waits.due(this.pull.pendingPulled(), at);
        void this.push.dispatcher.fill(this.push.dispatcher.newOrigin());
        ctx.waitUntil(this.arm(at));
      },
    });
    for (const c of this.capabilities) await c.start?.(this.now());
    if (await this.push.giveBackOrphans()) await this.alarmArm.set(this.now());
  }

  /** The object's name, e.g. `scope:Account:a1` (docs/design.md "Where a job lives, and its id"). */
  get home(): string {
    if (this.name === null) throw new Error("ScopeDO must be reached by name (getByName)");
    return this.name;
  }

  /** write: the one commit path — run a write, then what its record calls for (follow-ups.ts). */
  async write<A>(op: (now: number) => Written<A>): Promise<A> {
    const now = this.now();
    const { answer, changes } = op(now);
    await this.followUps.run(changes, now);
    return answer;
  }

  /** deliver: what another object owed this one, applied idempotently (workflow/deliveries.ts); per item, whether it was. */
  deliver(items: readonly OwedItem[]): Promise<boolean[]> {
    return applyOwed(this.store, this.home, items, (op) => this.write(op));
  }

  /** claim (pull): guarded types take permits first; a job with durable steps goes out with its journal (workflow/steps.ts). */
  async claim(req: ClaimRequest): Promise<(JobRow & { journal?: Journal })[]> {
    await this.pause.ensure();
    const rows = await this.pull.claim(req, { holder: this.home, busyType: (types) => this.catalogs.busyType(types) });
    if (rows.length > 0) await this.followUps.run(changed({ events: rows }), this.now());
    const journals = journalsOf(this.store, rows);
    return journals.size === 0 ? rows : rows.map((r) => (journals.has(r.seq) ? { ...r, journal: journals.get(r.seq)! } : r));
  }

  /** poke: a pool freed a slot this object was waiting for — for a pushed type, or for a claim of a pulled one. */
  async poke(pool?: string): Promise<void> {
    this.pull.poke(pool, this.now());
    await this.push.poke(pool);
  }

  async alarm(info?: AlarmInvocationInfo): Promise<void> {
    // Counts owed are not paid here (jobs/count-debt.ts): the pass's readers of them pay first (the summary) or add
    // what is owed (the retention sweep's wake); paid at every alarm, a held retry's restart wrote a count row each.
    await alarmPass(
      {
        store: this.store,
        alarmArm: this.alarmArm,
        capabilities: this.capabilities,
        lastReported: () => this.report.reporter.lastSent(),
        home: () => this.name,
        followUp: (changes, at) => this.followUps.run(changes, at),
        wakeAt: (at) => this.wakeAt(at),
      },
      this.now(),
      info,
    );
  }

  /** arm: set the alarm to the next wake-up, or delete it when nothing waits. */
  async arm(now: number): Promise<void> {
    await this.alarmArm.set(this.wakeAt(now));
  }

  private wakeAt(now: number): number | null {
    return nextWakeAt(this.capabilities, this.memo.wake(now), now);
  }

  /** readWake: the wake-up statement's row at `now` (the memo keeps it while it stands). */
  readWake(now: number): WakeRow {
    return this.store.sql.exec<WakeRow>(this.wakeSql, now).one();
  }

  private async sendSummary(summary: HomeSummary): Promise<void> {
    // The answer renews the shard's promise to tell this object of pauses (pause-gate.ts), counted from now.
    const sentAt = this.now();
    // The instance's whole total: a summary lost or sent twice counts once (catalog/usage-store.ts).
    this.pause.apply(await this.catalogs.report({ ...summary, usage: this.meter.report() }), sentAt);
  }

  /** pauseFresh: the dispatcher may trust the paused set; if not, a sync starts and fills again when it lands. */
  private pauseFresh(now: number): boolean {
    if (this.pause.fresh(now)) return true;
    this.pause.refresh();
    return false;
  }
}
