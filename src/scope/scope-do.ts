/**
 * ScopeDO: the jobs of one scope, or of one shard of a type's unscoped jobs.
 *
 * A thin shell: each RPC method takes `now` from the clock, runs one write of
 * writes.ts (synchronous SQL in one transaction), and hands the record of what
 * it changed to `FollowUps.run` — the one path that emits events, aborts
 * calls, returns permits, wakes parked claims, fills, reports and re-arms
 * (docs/design.md "One commit path"). Reads go straight to their module. The
 * alarm (alarm-pass.ts) is the reap and sweep loop and never throws.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import migrations from "../../migrations/scope/migrations.js";
import { AlarmArm } from "../alarm-arm";
import { systemClock, type Clock } from "../clock";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import type { TerminalState } from "../job/states";
import type { FailOutcome, StepView } from "../job/schemas";
import type { JobLogLine } from "../job/log-lines";
import { migrateStorage } from "../schema/migrate";
import { homeOfJobId } from "../job/home";
import { keepName, ownName } from "../object-name";
import { Dispatcher } from "../dispatch/dispatcher";
import type { HandlerEntrypointApi, Journal, JournalWrite } from "../dispatch/contract";
import { POOL_CALL_TIMEOUT_MS, guarded, withTimeout } from "../dispatch/permit-plan";
import { Catalogs } from "../catalog/shards";
import type { PauseSync } from "../catalog/pause-store";
import { dispatchPort } from "./dispatch-port";
import { CatalogReporter } from "./catalog-report";
import { EventSink, type Observer } from "./events";
import type { FailedCursor } from "./change";
import type { ClaimRequest } from "./claim";
import type { Decision, DecidingAnswer } from "./batch-stage";
import type { EnqueueOutcome, EnqueueRefusal, NewJob } from "./enqueue";
import type { JobRow } from "./job-row";
import type { Outcome } from "./outcome";
import type { InlineClaim } from "./inline-claim";
import type { CompleteItem, FailInput, SleepInput } from "./settle";
import type { ScopeStore } from "./store";
import { changed, type Changes, type Written } from "./changes";
import { FollowUps } from "./follow-ups";
import { writes, reportFor } from "./writes";
import { LeasePermits } from "./lease-permits";
import { BatchPart } from "./batch-part";
import { alarmPass } from "./alarm-pass";
import { jobTimeline, type TimelineStep } from "./timeline";
import { getJob, listJobs, type ListFilter } from "./read";
import { journalsOf, listSteps } from "./steps";
import { buildSummary, type HomeSummary } from "./summary";
import { nextWakeAt, readWakeRow } from "./wake";
import { Unchanged } from "./unchanged";
import { WaitNotifier } from "./wait-notify";
import { PauseGate } from "./pause-gate";
import { appendLeasedLogs, jobLogs } from "./job-logs";
import { pendingTypes } from "./counts";

export { ALARM_AGAIN_MS, ALARM_RETRY_MS } from "./alarm-pass";

export class ScopeDO extends DurableObject<Env> {
  /** Tests replace these with runInDurableObject. */
  clock: Clock = systemClock;
  random: () => number = Math.random;

  readonly store: ScopeStore;
  private readonly alarmArm: AlarmArm;
  private reporter!: CatalogReporter;
  private pause!: PauseGate;
  private readonly events: EventSink;
  private readonly dispatcher: Dispatcher<JobRow>;
  private readonly waits: WaitNotifier;
  /** The catalog's shards: this object reports to the one its home hashes to (catalog/shards.ts). */
  private readonly catalogs: Catalogs;
  private readonly permits: LeasePermits;
  private readonly batches: BatchPart;
  private readonly followUps: FollowUps;
  /** This object's name, kept in its storage: an instance its alarm woke cold is not told it (object-name.ts). */
  private name: string | null;
  /** The due types and the wake-up's row, kept while no write or lapse of time can change them (unchanged.ts). */
  private readonly unchanged: Unchanged;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.name = ownName(ctx);
    const self = this;
    const now = () => this.clock.now();
    const keepAlive = (p: Promise<unknown>) => ctx.waitUntil(p);
    this.store = {
      sql,
      atomic: (fn) => ctx.storage.transactionSync(fn),
      config: loadConfig(env),
      random: () => this.random(),
      touched: (at) => this.reporter.touched(at),
      // A getter, not a value: a serialized type must stay serialized in an instance woken cold, once its name is known.
      get scoped() {
        return self.knownHome()?.startsWith("scope:") ?? false;
      },
    };
    const config = this.store.config;
    this.alarmArm = new AlarmArm(ctx.storage);
    this.unchanged = new Unchanged(sql, (at) => readWakeRow(this.store, at));
    this.catalogs = new Catalogs(env.CATALOG, config.catalogShards);
    this.waits = new WaitNotifier((type) => env.WAIT.getByName(`wait:${type}`).notify(this.home), keepAlive);
    const binding = (name: string) => (env as unknown as Record<string, unknown>)[name];
    const events = (this.events = new EventSink(
      config,
      config.observer ? (binding(config.observer) as Observer) : null,
      keepAlive,
      config.analytics ? (binding(config.analytics) as AnalyticsEngineDataset) : null,
    ));
    this.permits = new LeasePermits({ store: this.store, pool: (name) => env.POOL.getByName(name), now, keepAlive });
    this.dispatcher = new Dispatcher<JobRow>({
      jobs: dispatchPort(this.store, config, (at) => this.pauseFresh(at), this.unchanged),
      config,
      now,
      home: () => this.home,
      handler: (name) => binding(name) as HandlerEntrypointApi,
      pool: (name) => env.POOL.getByName(name),
      keepAlive,
      invocationsPerCall: events.invocationsPerCall,
      // The dispatcher's own claims and settles of pushed jobs: events, catalog and alarm as for any write.
      changed: (rows, at) => this.followUps.run(changed({ events: rows, report: reportFor(this.store, rows) }), at),
      busyType: (types) => this.catalogs.busyType(types),
      reapNow: async () => {
        await this.write((at) => writes.reap(this.store, at));
      },
    });
    this.followUps = new FollowUps({
      config,
      events,
      home: () => this.knownHome() ?? "?",
      dispatcher: {
        cancelled: (id) => this.dispatcher.cancelled(id),
        reaped: (flights) => this.dispatcher.reaped(flights),
        fillNow: () => void this.dispatcher.fill(this.dispatcher.newOrigin()),
      },
      permits: this.permits,
      wake: (types, at) => this.waits.due(types, at),
      report: (urgency) => this.reporter.kick(urgency),
      arm: (at) => this.arm(at),
    });
    this.batches = new BatchPart({
      store: this.store,
      now,
      home: () => this.knownHome(),
      decider: (name) => env.SCOPE.getByName(name),
      commit: (changes, at) => this.followUps.run(changes, at),
    });
    void ctx.blockConcurrencyWhile(async () => {
      await migrateStorage(ctx.storage, migrations, "scope");
      this.reporter = new CatalogReporter({
        sql,
        now,
        build: (unreportedSince) => buildSummary(sql, this.home, this.clock.now(), unreportedSince),
        send: (summary) => this.sendSummary(summary),
        keepAlive,
        rearm: () => this.arm(this.clock.now()),
      });
      this.pause = new PauseGate({
        sql,
        atomic: (fn) => ctx.storage.transactionSync(fn),
        now,
        // Bounded: a claim awaits this, and a hung catalog must not hang it (the gate then goes on with its last set).
        ask: () => withTimeout(this.catalogs.pauseSync(this.home), POOL_CALL_TIMEOUT_MS),
        keepAlive,
        synced: () => {
          // Held-back or resumed work: parked claims of pulled types and the dispatcher look again, and the alarm is
          // set anew — while the type was paused, its delayed jobs were left out of every wake-up.
          const at = this.clock.now();
          this.waits.due(pendingTypes(sql).filter((t) => !config.pushTypes.includes(t)), at);
          void this.dispatcher.fill(this.dispatcher.newOrigin());
          ctx.waitUntil(this.arm(at));
        },
      });
      // Pushed attempts of the previous instance have no call any more: give them back now, unspent (orphans.ts).
      const orphans = await this.write((at) => writes.orphans(this.store, at));
      if (orphans > 0) {
        console.log(JSON.stringify({ event: "dispatch:released_orphans", home: this.name, jobs: orphans }));
        await this.alarmArm.set(this.clock.now());
      }
    });
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
  private knownHome(): string | null {
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
  private async write<A>(op: (now: number) => Written<A>): Promise<A> {
    const now = this.clock.now();
    const { answer, changes } = op(now);
    await this.followUps.run(changes, now);
    return answer;
  }

  // ------------------------------------------------------------ writes

  async enqueue(jobs: NewJob[]): Promise<EnqueueOutcome> {
    return this.write((now) => writes.enqueue(this.store, jobs, now));
  }

  async heartbeat(id: string, token: string, leaseMs: number | null): Promise<Outcome<{ leaseExpiresAt: number }>> {
    return this.write((now) => writes.heartbeat(this.store, id, token, leaseMs, now));
  }

  async complete(id: string, token: string, result: string | null): Promise<Outcome<{ row: JobRow }>> {
    return this.write((now) => writes.complete(this.store, id, token, result, now));
  }

  /** completeMany: a pull worker's completions of one moment, in one transaction and one statement (settle.ts). */
  async completeMany(items: CompleteItem[]): Promise<Outcome<{ id: string }>[]> {
    return this.write((now) => writes.completeMany(this.store, items, now));
  }

  async fail(id: string, token: string, input: FailInput): Promise<Outcome<{ row: JobRow; outcome: FailOutcome }>> {
    return this.write((now) => writes.fail(this.store, id, token, input, now));
  }

  /** release: the holder gives the job back unrun — pending, due now, its attempt not counted. */
  async release(id: string, token: string): Promise<Outcome<{ row: JobRow }>> {
    return this.write((now) => writes.release(this.store, id, token, now));
  }

  /** sleep: a pull worker's ctx.sleep — journal it and put the job back to pending until then, unspent. */
  async sleep(id: string, token: string, input: SleepInput): Promise<Outcome<{ row: JobRow }>> {
    return this.write((now) => writes.sleep(this.store, id, token, input, now));
  }

  /** appendStep: a pull worker's journal write, fenced by its lease (a pushed handler writes through its batch's control). */
  async appendStep(write: JournalWrite, token: string): Promise<Outcome<{ row: JobRow }>> {
    return this.write((now) => writes.appendStep(this.store, write, token, now));
  }

  /** resolveStep: an operator journals what an unfinished atMostOnce step did; a failed or cancelled job goes back to pending. */
  async resolveStep(id: string, name: string, resultJson: string): Promise<Outcome<{ row: JobRow }>> {
    return this.write((now) => writes.resolveStep(this.store, id, name, resultJson, now));
  }

  /** appendLogs: a pull worker's ctx.log lines, fenced by its lease (job-logs.ts); they change nothing anyone counts. */
  async appendLogs(id: string, token: string, items: { at: number; attempt?: number; message: string; fields?: unknown }[]): Promise<Outcome<{ stored: number }>> {
    return appendLeasedLogs(this.store, id, token, items, this.clock.now());
  }

  /** cancel: a running pushed job's handler sees its signal abort with reason `cancelled`. */
  async cancel(id: string, reason: string | null): Promise<Outcome<{ row: JobRow }>> {
    return this.write((now) => writes.cancel(this.store, id, reason, now));
  }

  /** cancelKeys: the live jobs of `type` under these dedupe keys; running ones are aborted with the reason. */
  async cancelKeys(type: string, keys: string[], reason: string | null): Promise<number> {
    return this.write((now) => writes.cancelKeys(this.store, type, keys, reason, now));
  }

  async cancelAll(pendingOnly: boolean, reason: string | null): Promise<number> {
    return this.write((now) => writes.cancelAll(this.store, pendingOnly, reason, now));
  }

  async retry(id: string): Promise<Outcome<{ row: JobRow }>> {
    return this.write((now) => writes.retry(this.store, id, now));
  }

  /** retryFailed: a page of failed jobs here (of one type, or all) back to pending, due now; `next` resumes. */
  async retryFailed(type: string | null, after: FailedCursor | null, limit?: number): Promise<{ retried: number; skipped: number; next: FailedCursor | null }> {
    return this.write((now) => writes.retryFailed(this.store, type, after, now, limit));
  }

  async prune(olderThan: number, states: TerminalState[]): Promise<number> {
    return this.write((now) => writes.prune(this.store, olderThan, states, now));
  }

  /** claimOrEnqueue: enqueue under the key (pending mode) and lease it to the caller when no job of the key runs (inline-claim.ts). */
  async claimOrEnqueue(job: NewJob, worker: string, leaseMs: number): Promise<InlineClaim> {
    await this.pause.ensure();
    return this.write((now) => writes.claimOrEnqueue(this.store, job, worker, leaseMs, now));
  }

  /** claimKey: lease the key's pending job when none of the key is running (a caller draining its key). */
  async claimKey(type: string, dedupeKey: string, worker: string, leaseMs: number): Promise<JobRow | null> {
    await this.pause.ensure();
    return this.write((now) => writes.claimKey(this.store, type, dedupeKey, worker, leaseMs, now));
  }

  /** claim (pull): never hands out jobs of push types — those belong to their handler. Guarded types take permits first. */
  async claim(req: ClaimRequest): Promise<(JobRow & { journal?: Journal })[]> {
    await this.pause.ensure();
    const rows = await this.permits.claim({ ...req, exclude: this.store.config.pushTypes }, { holder: this.home, busyType: (types) => this.catalogs.busyType(types) });
    if (rows.length > 0) await this.followUps.run(changed({ events: rows }), this.clock.now());
    // A job with durable steps goes out with its journal, so the worker replays them without asking (scope/steps.ts).
    const journals = journalsOf(this.store, rows.map((r) => r.seq));
    return journals.size === 0 ? rows : rows.map((r) => (journals.has(r.seq) ? { ...r, journal: journals.get(r.seq)! } : r));
  }

  // ------------------------------------------------------------ batches over several objects (batch-part.ts)

  /** stageBatch: this object's part of a batch over several objects, kept aside, invisible, until commit or abort. */
  async stageBatch(batch: string, decider: string, jobs: NewJob[]): Promise<EnqueueRefusal | null> {
    return this.batches.stage(batch, decider, jobs);
  }

  /** commitDecidingBatch: the decider enqueues its own part and records the decision in one transaction. */
  async commitDecidingBatch(batch: string, jobs: NewJob[]): Promise<DecidingAnswer> {
    return this.batches.commitDeciding(batch, jobs);
  }

  /** decideBatch: the decider's side — the batch's decision, `proposal` if it is the first. */
  async decideBatch(batch: string, proposal: Decision): Promise<Decision> {
    return this.batches.decide(batch, proposal);
  }

  /** commitBatch: the staged part becomes jobs; with nothing staged, the part's jobs as they are now, none created. */
  async commitBatch(batch: string, ids: readonly string[]): Promise<EnqueueOutcome> {
    return this.batches.commit(batch, ids);
  }

  /** abortBatch: drop the staged part (nothing of it was ever seen). */
  async abortBatch(batch: string): Promise<void> {
    return this.batches.abort(batch);
  }

  // ------------------------------------------------------------ pauses and pokes

  /** applyPause: the catalog shard tells of a pause or resume (catalog/pause-store.ts). */
  async applyPause(sync: PauseSync): Promise<void> {
    this.pause.apply(sync, this.clock.now());
  }

  /** paused: the types paused here, as this object last heard (tests and operators). */
  async paused(): Promise<string[]> {
    return this.pause.paused();
  }

  /** poke: a pool freed a slot this object was waiting for — for a pushed type, or for a claim of a pulled one. */
  async poke(): Promise<void> {
    const config = this.store.config;
    this.waits.due(pendingTypes(this.store.sql).filter((t) => !config.pushTypes.includes(t) && guarded(config, t)), this.clock.now());
    this.dispatcher.unblock();
    await this.dispatcher.fill(this.dispatcher.newOrigin());
  }

  // ------------------------------------------------------------ reads

  async get(id: string): Promise<JobRow | null> {
    return getJob(this.store.sql, id);
  }

  /** timeline: the job's newest `limit` transitions, oldest first; null when there is no such job. */
  async timeline(id: string, limit: number): Promise<{ steps: TimelineStep[]; earlier: number } | null> {
    return jobTimeline(this.store.sql, id, limit);
  }

  async list(filter: ListFilter, afterSeq: number, limit: number): Promise<JobRow[]> {
    return listJobs(this.store.sql, filter, afterSeq, limit);
  }

  async logs(id: string): Promise<JobLogLine[] | null> {
    return jobLogs(this.store.sql, id);
  }

  async steps(id: string): Promise<StepView[] | null> {
    return listSteps(this.store, id);
  }

  async summary(): Promise<HomeSummary> {
    return buildSummary(this.store.sql, this.home, this.clock.now());
  }

  /** drain: resolves once no handler call is in flight here and every answer is settled (tests, shutdown). */
  async drain(): Promise<void> {
    await this.dispatcher.idle();
  }

  /** flushCatalog: resolves once the catalog has every change made so far, with the alarm recomputed (tests and operators). */
  async flushCatalog(): Promise<void> {
    await this.reporter.flush();
    await this.arm(this.clock.now());
  }

  // ------------------------------------------------------------ alarm

  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    await alarmPass(
      {
        store: this.store,
        alarmArm: this.alarmArm,
        reporter: this.reporter,
        batches: this.batches,
        permits: this.permits,
        home: () => this.knownHome(),
        followUp: (changes: Changes, at) => this.followUps.run(changes, at),
        wake: (types, at) => this.waits.due(types, at),
        // The alarm is the safety net and the timer for delayed and retried push jobs.
        fill: () => this.dispatcher.fill(this.dispatcher.newOrigin()),
        wakeAt: (at) => this.wakeAt(at),
      },
      this.clock.now(),
      info,
    );
  }

  /** arm: set the alarm to the next wake-up, or delete it when nothing waits. */
  async arm(now: number): Promise<void> {
    await this.alarmArm.set(this.wakeAt(now));
  }

  private wakeAt(now: number): number | null {
    const times = [nextWakeAt(this.store, now, this.reporter.deadline(), this.unchanged), this.dispatcher.wakeAt(now), this.batches.deadline(), this.pause.heldBackUntil(now)];
    const due = times.filter((t): t is number => t !== null);
    return due.length === 0 ? null : Math.min(...due);
  }

  private async sendSummary(summary: HomeSummary): Promise<void> {
    // The answer renews the shard's promise to tell this object of pauses (pause-gate.ts), counted from now.
    const sentAt = this.clock.now();
    this.pause.apply(await this.catalogs.report(summary), sentAt);
  }

  /** pauseFresh: the dispatcher may trust the paused set; if not, a sync starts and fills again when it lands. */
  private pauseFresh(now: number): boolean {
    if (this.pause.fresh(now)) return true;
    this.pause.refresh();
    return false;
  }
}
