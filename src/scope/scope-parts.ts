/**
 * The parts of one scope object, wired together: its store, the dispatcher
 * of its pushed jobs, the catalog reporter, the pause gate, pulled leases'
 * permits, its side of batches, and the one path that runs what follows a
 * write (follow-ups.ts). `ScopeDO` (scope-do.ts) is the RPC shell over this.
 *
 * @module
 */
import { stubsOf } from "../stubs";
import migrations from "../../migrations/scope/migrations.js";
import { AlarmArm } from "../alarm-arm";
import type { Clock } from "../clock";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { migrateStorage } from "../tables/migrate";
import { markOrderedJobs } from "./jobs/ordered-repair";
import { markKeyedJobs } from "./jobs/keyed-claim";
import { PushedLeases } from "./jobs/pushed-leases";
import { CompletedSweep } from "./retention/completed-sweep";
import { homeOfJobId } from "../job/home";
import { keepName, ownName } from "../object-name";
import { Dispatcher } from "../dispatch/dispatcher";
import type { HandlerEntrypointApi, Journal } from "../job/handler-contract";
import { withTimeout } from "../deadlines";
import { guarded, permitPlan, POOL_CALL_TIMEOUT_MS } from "../pool/permit-plan";
import { Catalogs } from "../catalog/shards";
import { alarmPass } from "./alarm-pass";
import { BatchPart } from "./batches/batch-part";
import { CatalogReporter } from "./report/catalog-report";
import type { Meter } from "../metering/meter";
import { changed, nothing, type Written } from "./jobs/changes";
import type { ClaimRequest } from "./jobs/claim";
import { pendingTypes } from "./jobs/counts";
import { dispatchPort } from "./push/dispatch-port";
import { EventSink, type Observer } from "./watching/events";
import { FollowUps } from "./follow-ups";
import { OutboxSender, type OwedItem } from "./workflow/outbox";
import { RecentEvents } from "./workflow/event-waits";
import { applyOwed } from "./workflow/deliveries";
import type { JobRow } from "./jobs/job-row";
import { LeasePermits } from "./pull/lease-permits";
import { PauseGate } from "./jobs/pause-gate";
import { journalsOf } from "./workflow/steps";
import type { HomeStore } from "./jobs/home-store";
import { buildSummary, type HomeSummary } from "./report/summary";
import { WakeMemo } from "./jobs/wake-memo";
import { WaitNotifier } from "./pull/wait-notify";
import { Feed } from "./jobs/feed";
import { Watching } from "./watching/watching";
import { ExpiryMemo } from "./jobs/expiry";
import { gatheringsOver, nextGatherEnd } from "./jobs/gathering";
import { nextWakeAt, readWakeRow } from "./wake";
import { reportFor, writes } from "./writes";

/** What the shell lends its parts: the clock and randomness tests swap in. */
export interface ScopeHost {
  clock: Clock;
  random(): number;
}

export class ScopeParts {
  readonly store: HomeStore;
  readonly alarmArm: AlarmArm;
  reporter!: CatalogReporter;
  pause!: PauseGate;
  readonly events: EventSink;
  readonly dispatcher: Dispatcher<JobRow>;
  /** Tells parked pull claims of due work (tests put their own in its place). */
  waits: WaitNotifier;
  /** The catalog's shards: this object reports to the one its home hashes to (catalog/shards.ts). */
  readonly catalogs: Catalogs;
  readonly permits: LeasePermits;
  readonly batches: BatchPart;
  readonly followUps: FollowUps;
  /** Sends what this object owes others, after the commit and again from the alarm (outbox.ts). */
  readonly outbox: OutboxSender;
  /** Live subscriptions, completion callbacks and spans: what follows the jobs from outside (watching.ts). */
  readonly watching: Watching;
  /** The due types and the wake-up's row, kept while no write or lapse of time can change them (wake-memo.ts). */
  readonly memo: WakeMemo;
  /** A write owed other objects something since the last follow-ups (HomeStore.owed). */
  private owedSince = false;
  /** This object's name, kept in its storage: an instance its alarm woke cold is not told it (object-name.ts). */
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
    const self = this;
    const now = () => this.now();
    const keepAlive = (p: Promise<unknown>) => ctx.waitUntil(p);
    const feed = new Feed(() => this.watching.watchers.count > 0);
    this.store = {
      sql,
      // What a transaction that rolled back gathered for the watchers goes with it (feed.ts).
      atomic: (fn) => {
        const mark = feed.mark();
        try {
          return ctx.storage.transactionSync(fn);
        } catch (e) {
          feed.rollback(mark);
          throw e;
        }
      },
      feed,
      config: loadConfig(env),
      random: () => host.random(),
      touched: (at) => this.reporter.touched(at),
      owed: () => {
        this.owedSince = true;
      },
      pushed: new PushedLeases(),
      completed: new CompletedSweep(),
      recentEvents: new RecentEvents(),
      expiries: new ExpiryMemo(sql),
      queueToken: env.QUEUE_TOKEN ?? null,
      // A getter, not a value: a serialized type must stay serialized in an instance woken cold, once its name is known.
      get scoped() {
        return self.knownHome()?.startsWith("scope:") ?? false;
      },
    };
    const config = this.store.config;
    const binding = (name: string) => (env as unknown as Record<string, unknown>)[name];
    this.alarmArm = new AlarmArm(ctx.storage);
    this.memo = new WakeMemo(sql, (at) => readWakeRow(this.store, at));
    this.catalogs = new Catalogs(env.CATALOG, config.catalogShards);
    this.waits = new WaitNotifier((type) => env.WAIT.getByName(`wait:${type}`).notify(this.home), keepAlive);
    this.events = new EventSink(
      config,
      config.observer ? (binding(config.observer) as Observer) : null,
      keepAlive,
      config.analytics ? (binding(config.analytics) as AnalyticsEngineDataset) : null,
    );
    const pool = stubsOf(env.POOL);
    this.permits = new LeasePermits({ store: this.store, pool, now, keepAlive });
    this.dispatcher = new Dispatcher<JobRow>({
      jobs: dispatchPort(this.store, config, (at) => this.pauseFresh(at), this.memo),
      config,
      now,
      home: () => this.home,
      handler: (name) => binding(name) as HandlerEntrypointApi,
      pool,
      keepAlive,
      invocationsPerCall: this.events.invocationsPerCall,
      // The dispatcher's own claims and settles of pushed jobs: events, catalog and alarm as for any write.
      changed: (rows, at) => this.followUps.run(changed({ events: rows, report: reportFor(this.store, rows) }), at),
      busyType: (types) => this.catalogs.busyType(types),
      reapNow: async () => void (await this.write((at) => writes.reap(this.store, at))),
      progress: async (items) => void (await this.write((at) => writes.progress(this.store, items, at))),
      // A pushed call's steps were written outside a write's record: the watchers take what the feed gathered.
      journaled: () => {
        if (this.watching.watchers.count > 0) void this.followUps.run(nothing(), this.now());
      },
    });
    this.outbox = new OutboxSender({
      sql,
      now,
      // What this object owes itself (a scoped child of a scoped parent) is applied here, not sent round.
      deliver: (home, items) => (home === this.knownHome() ? this.deliver(items) : env.SCOPE.getByName(home).deliver(items)),
      keepAlive,
      rearm: () => this.arm(this.now()),
    });
    this.watching = new Watching({ ctx, env, config, now, keepAlive, rearm: () => this.arm(this.now()) });
    this.followUps = new FollowUps({
      watchers: this.watching.watchers,
      tracing: this.watching.tracing,
      feed: () => this.store.feed.take(),
      ended: (rows) => {
        this.store.completed.note(rows, this.store.config.retention.completedMs);
        // A pushed attempt ended by any write (a cancel, a release) is forgotten at once, not at its expiry.
        this.store.pushed.note(rows);
      },
      config,
      events: this.events,
      home: () => this.knownHome() ?? "?",
      dispatcher: {
        cancelled: (id) => this.dispatcher.cancelled(id),
        reaped: (flights) => this.dispatcher.reaped(flights),
        fillNow: (due) => {
          this.dispatcher.fresh(due);
          void this.dispatcher.fill(this.dispatcher.newOrigin());
        },
      },
      permits: this.permits,
      wake: (types, at) => this.waits.due(types, at),
      report: (urgency) => this.reporter.kick(urgency),
      arm: (at) => this.arm(at),
      sendOwed: () => this.outbox.kick(),
      callBack: () => this.watching.callbacks.kick(),
      takeOwed: () => {
        const owed = this.owedSince;
        this.owedSince = false;
        return owed;
      },
    });
    this.batches = new BatchPart({
      store: this.store,
      now,
      home: () => this.knownHome(),
      decider: (name) => env.SCOPE.getByName(name),
      commit: (changes, at) => this.followUps.run(changes, at),
    });
  }

  now(): number {
    return this.host.clock.now();
  }

  /** start: the storage migrated, the reporter and pause gate made, and the last instance's orphans given back. */
  async start(): Promise<void> {
    const { ctx, store } = this;
    const { sql, config } = store;
    await this.meter.setup(() => migrateStorage(ctx.storage, migrations, "scope"));
    markOrderedJobs(sql, config);
    markKeyedJobs(sql, config);
    this.reporter = new CatalogReporter({
      sql,
      now: () => this.now(),
      build: (unreportedSince) => buildSummary(sql, this.home, this.now(), unreportedSince),
      send: (summary) => this.sendSummary(summary),
      keepAlive: (p) => ctx.waitUntil(p),
      rearm: () => this.arm(this.now()),
    });
    this.pause = new PauseGate({
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
        this.waits.due(pendingTypes(sql).filter((t) => !config.pushTypes.includes(t)), at);
        void this.dispatcher.fill(this.dispatcher.newOrigin());
        ctx.waitUntil(this.arm(at));
      },
    });
    // Pushed attempts of the previous instance have no call any more: give them back now, unspent (orphans.ts).
    const orphans = await this.write((at) => writes.orphans(store, at));
    if (orphans.n > 0) {
      console.log(JSON.stringify({ event: "dispatch:released_orphans", home: this.name, jobs: orphans.n }));
      // Their permits lived in the dead instance's memory: the pools they came from drop what it held, so a limit it
      // filled is free at once — for this object's next acquire (which drops them itself too) and for the others
      // waiting there (poked). Not awaited: nothing here needs the answers (docs/design.md "Restart").
      const pools = new Set(orphans.rows.flatMap((r) => permitPlan(config, r.type, r.limit_key).map((s) => s.pool)));
      const home = this.home;
      const epoch = this.dispatcher.epoch;
      for (const p of pools) {
        this.ctx.waitUntil(
          withTimeout(this.env.POOL.getByName(p).dropStale(home, epoch), POOL_CALL_TIMEOUT_MS).catch((e: unknown) =>
            console.error(JSON.stringify({ event: "pool:drop_stale_failed", pool: p, error: String(e) })),
          ),
        );
      }
      await this.alarmArm.set(this.now());
    }
  }

  /** The object's name, e.g. `scope:Account:a1` (docs/design.md "Where a job lives, and its id"). */
  get home(): string {
    const name = this.knownHome();
    if (!name) throw new Error("ScopeDO must be reached by name (getByName)");
    return name;
  }

  /**
   * knownHome: the kept name or, for an object that holds jobs but predates
   * keeping it, the home its job ids name (each id starts with it) — written
   * down at once. Null only for such an object with no jobs left.
   */
  knownHome(): string | null {
    if (this.name !== null) return this.name;
    const row = this.store.sql.exec<{ id: string }>("SELECT id FROM job LIMIT 1").toArray()[0];
    const home = row ? homeOfJobId(row.id)?.name ?? null : null;
    if (home !== null) {
      this.name = home;
      keepName(this.ctx, home);
    }
    return home;
  }

  /** write: the one commit path — run a write, then what its record calls for (follow-ups.ts). */
  async write<A>(op: (now: number) => Written<A>): Promise<A> {
    const now = this.now();
    const { answer, changes } = op(now);
    await this.followUps.run(changes, now);
    return answer;
  }

  /** claim (pull): never hands out jobs of push types — those belong to their handler. Guarded types take permits first. */
  async claim(req: ClaimRequest): Promise<(JobRow & { journal?: Journal })[]> {
    await this.pause.ensure();
    const rows = await this.permits.claim({ ...req, exclude: this.store.config.pushTypes }, { holder: this.home, busyType: (types) => this.catalogs.busyType(types) });
    if (rows.length > 0) await this.followUps.run(changed({ events: rows }), this.now());
    // A job with durable steps goes out with its journal, so the worker replays them without asking (scope/workflow/steps.ts).
    const journals = journalsOf(this.store, rows.map((r) => r.seq));
    return journals.size === 0 ? rows : rows.map((r) => (journals.has(r.seq) ? { ...r, journal: journals.get(r.seq)! } : r));
  }

  /** deliver: what another object owed this one, applied idempotently (deliveries.ts); per item, whether it was. */
  deliver(items: readonly OwedItem[]): Promise<boolean[]> {
    return applyOwed(this.store, this.home, items, (op) => this.write(op));
  }

  /** poke: a pool freed a slot this object was waiting for — for a pushed type, or for a claim of a pulled one. */
  async poke(pool?: string): Promise<void> {
    const config = this.store.config;
    if (pool === undefined) this.permits.turns.unblockAll();
    else this.permits.turns.unblockPool(pool);
    this.waits.due(pendingTypes(this.store.sql).filter((t) => !config.pushTypes.includes(t) && guarded(config, t)), this.now());
    this.dispatcher.unblock(pool);
    await this.dispatcher.fill(this.dispatcher.newOrigin());
  }

  async alarm(info?: AlarmInvocationInfo): Promise<void> {
    await alarmPass(
      {
        store: this.store,
        alarmArm: this.alarmArm,
        reporter: this.reporter,
        batches: this.batches,
        permits: this.permits,
        home: () => this.knownHome(),
        followUp: (changes, at) => this.followUps.run(changes, at),
        // Pulled batch types whose gathering ended (gathering.ts): their parked claims look again.
        wake: (types, at) => this.waits.due([...new Set([...types, ...gatheringsOver(this.store, at)])], at),
        // The alarm is the safety net and the timer for delayed and retried push jobs.
        fill: () => this.dispatcher.fill(this.dispatcher.newOrigin()),
        wakeAt: (at) => this.wakeAt(at),
        sendOwed: async () => void (await Promise.all([this.outbox.flushDue(), this.watching.callbacks.flushDue()])),
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
    const times = [
      nextWakeAt(this.store, now, this.reporter.deadline(), this.memo),
      this.dispatcher.wakeAt(now),
      this.batches.deadline(),
      this.pause.heldBackUntil(now),
      nextGatherEnd(this.store, now),
    ];
    const due = times.filter((t): t is number => t !== null);
    return due.length === 0 ? null : Math.min(...due);
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
