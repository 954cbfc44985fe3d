/**
 * ScopeDO: the jobs of one scope, or of one shard of a type's unscoped jobs.
 *
 * A thin shell: each RPC method takes `now` from the clock, runs one
 * operation from this folder (synchronous SQL in one transaction), then
 * re-arms the alarm and lets the catalog know. The alarm is the reap and
 * sweep loop and never throws.
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
import type { FailOutcome } from "../job/schemas";
import { migrateStorage } from "../schema/migrate";
import { homeOfJobId } from "../job/home";
import { keepName, ownName } from "../object-name";
import { Dispatcher, type Origin } from "../dispatch/dispatcher";
import { dispatchPort, reapedFlights } from "./dispatch-port";
import type { HandlerEntrypointApi } from "../dispatch/contract";
import { CatalogReporter, type ReportUrgency } from "./catalog-report";
import { EventSink, type Observer } from "./events";
import { cancelAll, cancelJob, cancelKeys, retryFailed, retryJob, type FailedCursor } from "./change";
import type { ClaimRequest } from "./claim";
import { anyPermits, holdPermits, holdPermitsOfKeys, permitsOfLease, pullClaim, returnable } from "./pull-permits";
import { guarded, PERMIT_TTL_FACTOR, POOL_CALL_TIMEOUT_MS, withTimeout } from "../dispatch/permit-plan";
import { checkEnqueue, enqueueJobs, type Enqueued, type EnqueueOutcome, type EnqueueRefusal, type NewJob } from "./enqueue";
import { commitDeciding, decide as decideBatch, nextStageDeadline, partAsItIs, stage as stageJobs, stale as staleBatches, take as takeStage, type Decision, type DecidingAnswer } from "./batch-stage";
import type { JobRow } from "./job-row";
import type { Outcome, Refusal } from "./outcome";
import { pruneMetrics } from "./minute-counters";
import { jobTimeline, type TimelineStep } from "./timeline";
import { getJob, listJobs, type ListFilter } from "./read";
import { reapOnce } from "./reap-pass";
import { releaseOrphans } from "./orphans";
import { claimKey, claimOrEnqueue, type InlineClaim } from "./inline-claim";
import { complete, completeMany, fail, heartbeat, release, sleep, type CompleteItem, type FailInput, type SleepInput } from "./settle";
import { leaseRefusal } from "./lease";
import { appendStep, journalsOf, listSteps, resolveStep } from "./steps";
import type { StepView } from "../job/schemas";
import type { Journal, JournalWrite } from "../dispatch/contract";
import type { ScopeStore } from "./store";
import { buildSummary, type HomeSummary } from "./summary";
import { prune, sweepOnce } from "./sweep-pass";
import { cameDueSince, nextWakeAt, readWakeRow } from "./wake";
import { Unchanged } from "./unchanged";
import { WaitNotifier } from "./wait-notify";
import { Catalogs } from "../catalog/shards";
import type { PauseSync } from "../catalog/pause-store";
import { PauseGate } from "./pause-gate";
import { appendLeasedLogs, jobLogs } from "./job-logs";
import type { JobLogLine } from "../job/log-lines";
import { pendingTypes } from "./counts";

/** Inside alarm(), never re-arm for "now": a pass that filled its batch comes back this soon. */
export const ALARM_AGAIN_MS = 20;
/** After a failed alarm pass, try again this much later. */
export const ALARM_RETRY_MS = 5_000;

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
  /** Some job_permit row may exist here (unknown after a restart, so true): while false, settles skip the permit pass. */
  private permitsHeld = true;
  /** Some batch part may be staged here (unknown after a restart, so true): while false, the wake-up skips the stage query. */
  private stagesHeld = true;
  /** This object's name, kept in its storage: an instance its alarm woke cold is not told it (object-name.ts). */
  private name: string | null;
  /** The due types and the wake-up's row, kept while no write or lapse of time can change them (unchanged.ts). */
  private readonly unchanged: Unchanged;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.name = ownName(ctx);
    const self = this;
    this.store = {
      sql,
      atomic: (fn) => ctx.storage.transactionSync(fn),
      config: loadConfig(env),
      random: () => this.random(),
      touched: (now) => this.reporter.touched(now),
      // A getter, not a value: a serialized type must stay serialized in an instance woken cold, once its name is known.
      get scoped() {
        return self.knownHome()?.startsWith("scope:") ?? false;
      },
    };
    this.alarmArm = new AlarmArm(ctx.storage);
    this.unchanged = new Unchanged(sql, (now) => readWakeRow(this.store, now));
    this.catalogs = new Catalogs(env.CATALOG, this.store.config.catalogShards);
    const config = this.store.config;
    this.waits = new WaitNotifier((type) => env.WAIT.getByName(`wait:${type}`).notify(this.home), (p) => ctx.waitUntil(p));
    const binding = (name: string) => (env as unknown as Record<string, unknown>)[name];
    this.events = new EventSink(
      config,
      config.observer ? (binding(config.observer) as Observer) : null,
      (p) => ctx.waitUntil(p),
      config.analytics ? (binding(config.analytics) as AnalyticsEngineDataset) : null,
    );
    this.dispatcher = new Dispatcher<JobRow>({
      jobs: dispatchPort(this.store, config, (now) => this.pauseFresh(now), this.unchanged),
      config,
      now: () => this.clock.now(),
      home: () => this.home,
      handler: (name) => binding(name) as HandlerEntrypointApi,
      pool: (name) => env.POOL.getByName(name),
      keepAlive: (p) => ctx.waitUntil(p),
      invocationsPerCall: this.events.invocationsPerCall,
      changed: (rows, now) => this.afterWrite(now, rows, null, this.reportFor(rows)),
      busyType: (types) => this.catalogs.busyType(types),
      reapNow: async () => {
        const now = this.clock.now();
        this.reap(now);
        await this.afterWrite(now);
      },
    });
    void ctx.blockConcurrencyWhile(async () => {
      await migrateStorage(ctx.storage, migrations, "scope");
      this.reporter = new CatalogReporter({
        sql,
        now: () => this.clock.now(),
        build: (unreportedSince) => buildSummary(sql, this.home, this.clock.now(), unreportedSince),
        send: (summary) => this.sendSummary(summary),
        keepAlive: (p) => ctx.waitUntil(p),
        rearm: () => this.arm(this.clock.now()),
      });
      this.pause = new PauseGate({
        sql,
        atomic: (fn) => ctx.storage.transactionSync(fn),
        now: () => this.clock.now(),
        // Bounded: a claim awaits this, and a hung catalog must not hang it (the gate then goes on with its last set).
        ask: () => withTimeout(this.catalogs.pauseSync(this.home), POOL_CALL_TIMEOUT_MS),
        keepAlive: (p) => ctx.waitUntil(p),
        synced: () => {
          // Held-back or resumed work: parked claims of pulled types and the dispatcher look again, and the alarm is
          // set anew — while the type was paused, its delayed jobs were left out of every wake-up.
          const now = this.clock.now();
          this.waits.due(pendingTypes(sql).filter((t) => !config.pushTypes.includes(t)), now);
          void this.dispatcher.fill(this.dispatcher.newOrigin());
          ctx.waitUntil(this.arm(now));
        },
      });
      // Pushed attempts of the previous instance have no call any more: give them back now, unspent (orphans.ts).
      const now = this.clock.now();
      const orphans = releaseOrphans(this.store, now);
      this.events.released(orphans, now, "its object restarted while the handler call was in flight");
      if (orphans.length > 0) {
        console.log(JSON.stringify({ event: "dispatch:released_orphans", home: this.name, jobs: orphans.length }));
        await this.alarmArm.set(now);
      }
    });
  }

  /** The object's name, e.g. `scope:Account:a1` (DESIGN.md §2). */
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

  // ------------------------------------------------------------ writes

  async enqueue(jobs: NewJob[]): Promise<EnqueueOutcome> {
    const now = this.clock.now();
    const out = enqueueJobs(this.store, jobs, now);
    if (!out.ok) return out;
    await this.afterEnqueue(out, now);
    return out;
  }

  private async afterEnqueue(out: { results: Enqueued[] }, now: number): Promise<void> {
    const created = out.results.flatMap((r) => (r.created ? [r.row] : []));
    this.events.enqueued(created);
    this.dueForClaims(created, now);
    // Due push jobs are dispatched now, without waiting for the alarm; the enqueue does not wait for the dispatch.
    const config = this.store.config;
    // Every row the enqueue answered with: a duplicate's debounce or replacement changed its row too.
    const answered = out.results.flatMap((r) => (r.row ? [r.row] : []));
    const report = created.some((row) => config.waitedOn.includes(row.type)) ? "urgent" : this.reportFor(answered);
    await this.afterWrite(now, [], this.dispatcher.newOrigin(), report);
  }

  /**
   * stageBatch: this object's part of a batch over several objects (batch-stage.ts): checked as the enqueue
   * would check it, then kept aside, invisible, until `commitBatch` or `abortBatch` — or, if neither comes,
   * until the alarm asks `decider`.
   */
  async stageBatch(batch: string, decider: string, jobs: NewJob[]): Promise<EnqueueRefusal | null> {
    const now = this.clock.now();
    // Only a key or a depth cap can refuse a job; a part with neither skips the dry run (it would enqueue and roll back all of it).
    const config = this.store.config;
    if (jobs.some((j) => j.dedupeKey !== null || config.typeSettings(j.type).maxDepth !== null)) {
      const refused = checkEnqueue(this.store, jobs, now);
      if (refused) return refused;
    }
    stageJobs(this.store, batch, decider, jobs, now);
    this.stagesHeld = true;
    await this.arm(now);
    return null;
  }

  /** commitDecidingBatch: the decider enqueues its own part and records the decision in one transaction (batch-stage.ts). */
  async commitDecidingBatch(batch: string, jobs: NewJob[]): Promise<DecidingAnswer> {
    const now = this.clock.now();
    const answer = commitDeciding(this.store, batch, jobs, now);
    if (answer.decision === "commit") await this.afterEnqueue(answer.outcome, now);
    return answer;
  }

  /** decideBatch: the decider's side — the batch's decision, `proposal` if it is the first (batch-stage.ts). */
  async decideBatch(batch: string, proposal: Decision): Promise<Decision> {
    return decideBatch(this.store, batch, proposal, this.clock.now());
  }

  /**
   * commitBatch: the staged part becomes jobs, as an enqueue of them would make them. With nothing staged (this
   * object's alarm applied the part first, or a first call's answer was lost), the part's jobs are answered as
   * they are now, read by `ids` in one statement, none created.
   */
  async commitBatch(batch: string, ids: readonly string[]): Promise<EnqueueOutcome> {
    return (await this.applyStage(batch)) ?? partAsItIs(this.store, ids);
  }

  /** applyStage: a decided part's jobs enqueued, or null when nothing of `batch` is staged here. */
  private async applyStage(batch: string): Promise<EnqueueOutcome | null> {
    const now = this.clock.now();
    const out = this.store.atomic(() => {
      const jobs = takeStage(this.store, batch);
      return jobs === null ? null : enqueueJobs(this.store, jobs, now, true);
    });
    if (out?.ok) await this.afterEnqueue(out, now);
    else await this.arm(now);
    return out;
  }

  /** abortBatch: drop the staged part (nothing of it was ever seen). */
  async abortBatch(batch: string): Promise<void> {
    this.store.atomic(() => takeStage(this.store, batch));
    await this.arm(this.clock.now());
  }


  /** claim (pull): never hands out jobs of push types — those belong to their handler. Guarded types take permits first. */
  async claim(req: ClaimRequest): Promise<(JobRow & { journal?: Journal })[]> {
    await this.pause.ensure();
    const rows = await pullClaim(
      {
        store: this.store,
        holder: this.home,
        pool: (name) => this.env.POOL.getByName(name),
        busyType: (types) => this.catalogs.busyType(types),
        giveBack: (pool, ids) => this.ctx.waitUntil(this.givePermitsBack(pool, ids, true)),
        now: () => this.clock.now(),
      },
      { ...req, exclude: this.store.config.pushTypes },
    );
    const now = this.clock.now();
    if (rows.some((r) => guarded(this.store.config, r.type))) this.permitsHeld = true;
    if (rows.length > 0) await this.afterWrite(now, rows);
    // A job with durable steps goes out with its journal, so the worker replays them without asking (scope/steps.ts).
    const journals = journalsOf(this.store, rows.map((r) => r.seq));
    return journals.size === 0 ? rows : rows.map((r) => (journals.has(r.seq) ? { ...r, journal: journals.get(r.seq)! } : r));
  }

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

  async heartbeat(id: string, token: string, leaseMs: number | null): Promise<Outcome<{ leaseExpiresAt: number }>> {
    const now = this.clock.now();
    const out = heartbeat(this.store, id, token, leaseMs, now);
    this.refused("heartbeat", id, out, now);
    // Only an explicit leaseMs can shorten a lease (and need the alarm earlier); otherwise it only moves later.
    if (out.ok && leaseMs !== null) await this.arm(now);
    if (out.ok) await this.renewPermits(id, token, (out.leaseExpiresAt - now) * PERMIT_TTL_FACTOR);
    return out;
  }

  async complete(id: string, token: string, result: string | null): Promise<Outcome<{ row: JobRow }>> {
    const now = this.clock.now();
    return this.settled(now, this.refused("complete", id, complete(this.store, id, token, result, now), now));
  }

  /** completeMany: a pull worker's completions of one moment, in one transaction and one statement (settle.ts). */
  async completeMany(items: CompleteItem[]): Promise<Outcome<{ id: string }>[]> {
    const now = this.clock.now();
    const rows = completeMany(this.store, items, now);
    const done = new Set(rows.map((r) => r.id));
    const outs: Outcome<{ id: string }>[] = items.map((i) => (done.has(i.id) ? { ok: true, id: i.id } : this.refused("complete", i.id, leaseRefusal(this.store, i.id, i.token, now), now)));
    if (rows.length > 0) {
      await this.returnPermits();
      this.dueForClaims(rows, now);
      await this.afterWrite(now, rows, this.dispatcher.newOrigin());
    }
    return outs;
  }

  async fail(id: string, token: string, input: FailInput): Promise<Outcome<{ row: JobRow; outcome: FailOutcome }>> {
    const now = this.clock.now();
    return this.settled(now, this.refused("fail", id, fail(this.store, id, token, input, now), now));
  }

  /** claimOrEnqueue: enqueue under the key (pending mode) and lease it to the caller when no job of the key runs (inline-claim.ts). */
  async claimOrEnqueue(job: NewJob, worker: string, leaseMs: number): Promise<InlineClaim> {
    await this.pause.ensure();
    const now = this.clock.now();
    const out = claimOrEnqueue(this.store, job, worker, leaseMs, now);
    if (out.ok) await this.afterWrite(now, out.leased ? [out.leased] : []);
    return out;
  }

  /** claimKey: lease the key's pending job when none of the key is running (a caller draining its key). */
  async claimKey(type: string, dedupeKey: string, worker: string, leaseMs: number): Promise<JobRow | null> {
    await this.pause.ensure();
    const now = this.clock.now();
    const row = claimKey(this.store, type, dedupeKey, worker, leaseMs, now);
    if (row) await this.afterWrite(now, [row]);
    return row;
  }

  /** release: the holder gives the job back unrun — pending, due now, its attempt not counted. */
  async release(id: string, token: string): Promise<Outcome<{ row: JobRow }>> {
    const now = this.clock.now();
    // Given back unrun: this lease's permits have their rate spend refunded, as for an attempt that never started.
    const unrun = this.permitsHeld ? permitsOfLease(this.store.sql, id, token) : new Map<string, string[]>();
    const out = this.refused("release", id, release(this.store, id, token, "given back by its worker", now), now);
    if (!out.ok) return out;
    await this.returnPermits(unrun);
    this.dueForClaims([out.row], now);
    this.events.released([out.row], now, "given back by its worker");
    await this.afterWrite(now, [], this.dispatcher.newOrigin());
    return out;
  }

  /** appendStep: a pull worker's journal write, fenced by its lease (a pushed handler writes through its batch's control). */
  async appendStep(write: JournalWrite, token: string): Promise<Outcome<{ row: JobRow }>> {
    const now = this.clock.now();
    return this.refused("step", write.id, appendStep(this.store, write, token, now), now);
  }

  /** sleep: a pull worker's ctx.sleep — journal it and put the job back to pending until then, unspent. */
  async sleep(id: string, token: string, input: SleepInput): Promise<Outcome<{ row: JobRow }>> {
    const now = this.clock.now();
    return this.settled(now, this.refused("sleep", id, sleep(this.store, id, token, input, now), now));
  }

  /** resolveStep: an operator journals what an unfinished atMostOnce step did; a failed or cancelled job goes back to pending. */
  async resolveStep(id: string, name: string, resultJson: string): Promise<Outcome<{ row: JobRow }>> {
    const now = this.clock.now();
    const out = resolveStep(this.store, id, name, resultJson, now, (job) => retryJob(this.store, job.id, now));
    if (out.ok) await this.afterWrite(now, [], this.dispatcher.newOrigin());
    return out;
  }

  async logs(id: string): Promise<JobLogLine[] | null> {
    return jobLogs(this.store.sql, id);
  }

  /** appendLogs: a pull worker's ctx.log lines, fenced by its lease (job-logs.ts); an item without an attempt is the current one's. */
  async appendLogs(id: string, token: string, items: { at: number; attempt?: number; message: string; fields?: unknown }[]): Promise<Outcome<{ stored: number }>> {
    return appendLeasedLogs(this.store, id, token, items, this.clock.now());
  }

  async steps(id: string): Promise<StepView[] | null> {
    return listSteps(this.store, id);
  }

  /** cancel: a running pushed job's handler sees its signal abort with reason `cancelled`. */
  async cancel(id: string, reason: string | null): Promise<Outcome<{ row: JobRow }>> {
    const now = this.clock.now();
    holdPermits(this.store.sql, id);
    const out = cancelJob(this.store, id, reason, now);
    if (out.ok) this.dispatcher.cancelled(id);
    return this.settled(now, out);
  }

  /** cancelKeys: the live jobs of `type` under these dedupe keys; running ones are aborted with the reason. */
  async cancelKeys(type: string, keys: string[], reason: string | null): Promise<number> {
    const now = this.clock.now();
    holdPermitsOfKeys(this.store.sql, type, keys);
    const rows = cancelKeys(this.store, type, keys, reason, now);
    for (const r of rows) this.dispatcher.cancelled(r.id);
    await this.returnPermits();
    // A follower waiting behind a cancelled running job of its key is due now.
    this.dueForClaims(rows, now);
    if (rows.length > 0) await this.afterWrite(now, rows, this.dispatcher.newOrigin());
    return rows.length;
  }

  async retry(id: string): Promise<Outcome<{ row: JobRow }>> {
    const now = this.clock.now();
    const out = retryJob(this.store, id, now);
    if (out.ok) this.dueForClaims([out.row], now);
    // A retried job is pending again, not an attempt's end: no event, but it may be due for dispatch.
    if (out.ok) await this.afterWrite(now, [], this.dispatcher.newOrigin());
    return out;
  }

  /** retryFailed: a page of failed jobs here (of one type, or all) back to pending, due now; `next` resumes. */
  async retryFailed(type: string | null, after: FailedCursor | null, limit?: number): Promise<{ retried: number; skipped: number; next: FailedCursor | null }> {
    const now = this.clock.now();
    const out = retryFailed(this.store, type, after, now, limit);
    if (out.retried > 0) await this.afterWrite(now, [], this.dispatcher.newOrigin());
    return out;
  }

  async cancelAll(pendingOnly: boolean, reason: string | null): Promise<number> {
    const now = this.clock.now();
    if (!pendingOnly) holdPermits(this.store.sql, null);
    const rows = cancelAll(this.store, pendingOnly, reason, now);
    for (const r of rows) this.dispatcher.cancelled(r.id);
    await this.returnPermits();
    if (rows.length > 0) await this.afterWrite(now, rows);
    return rows.length;
  }

  async prune(olderThan: number, states: TerminalState[]): Promise<number> {
    const now = this.clock.now();
    const n = prune(this.store, olderThan, states, now);
    await this.returnPermits();
    if (n > 0) await this.afterWrite(now);
    return n;
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
    const now = this.clock.now();
    this.alarmArm.consumed();
    let again = false;
    let failed = false;
    let cameDue: string[] | null = null;
    try {
      cameDue = cameDueSince(this.store, this.reporter.lastSent(), now);
      const reaped = this.reap(now);
      // Pulled jobs whose delay or backoff ended: parked claims may take them (reaped ones are told in reap()).
      this.waits.due(cameDue.filter((t) => !this.store.config.pushTypes.includes(t)), now);
      const swept = sweepOnce(this.store, now);
      // Batches staged here whose commit never came: their decider says what they became (batch-stage.ts).
      await this.settleStaleBatches(now);
      // Reaped attempts' permits, and any a crashed instance left after a settle (pull-permits.ts).
      await this.returnPermits();
      pruneMetrics(this.store.sql, now, this.reporter.unreportedSince());
      again = reaped.more || swept.more;
      // The alarm is the safety net and the timer for delayed and retried push jobs.
      await this.dispatcher.fill(this.dispatcher.newOrigin());
    } catch (e) {
      failed = true;
      this.recordAlarmError(now, e, info);
    }
    try {
      if (this.knownHome() === null) {
        // An empty object older than name keeping, woken cold: nothing to tell and no name to tell it under.
        // Drop the mark rather than retry forever; its next named call keeps the name and reports again.
        this.reporter.forget();
      } else {
        // Changes made above are reported as usual; a job that only came due changes no row, so it forces a report.
        // A fresh instance (nothing sent yet) reports whatever it holds.
        await this.reporter.flush(this.reporter.lastSent() === null || cameDue === null || cameDue.length > 0);
      }
    } catch (e) {
      // Not this object's failure: the reporter's own deadline (with its retry delay) brings the alarm back.
      console.error(JSON.stringify({ event: "alarm:report_failed", home: this.name, error: String(e) }));
    }
    let at: number | null = null;
    try {
      at = this.wakeAt(now);
    } catch (e) {
      failed = true;
      this.recordAlarmError(now, e, info);
    }
    // Never "now" from inside alarm(): a pass that filled its batch comes back shortly, a failed one later.
    if (failed) at = Math.min(at ?? Infinity, now + ALARM_RETRY_MS);
    if (again) at = Math.min(at ?? Infinity, now + ALARM_AGAIN_MS);
    if (at !== null && at <= now) at = now + (failed ? ALARM_RETRY_MS : ALARM_AGAIN_MS);
    // Re-arming is the one step left that may throw: if storage cannot take an alarm, a platform retry is the only way back.
    await this.alarmArm.set(at);
  }

  /** settleStaleBatches: ask each stale stage's decider (abort, unless it committed) and do what it says. */
  private async settleStaleBatches(now: number): Promise<void> {
    // Most objects never hold a stage: the same flag as the wake-up's (stageDeadline) spares every alarm the read.
    if (!this.stagesHeld) return;
    for (const { batch, decider } of staleBatches(this.store, now)) {
      try {
        const decision = decider === this.knownHome() ? decideBatch(this.store, batch, "abort", now) : await this.env.SCOPE.getByName(decider).decideBatch(batch, "abort");
        console.log(JSON.stringify({ event: "batch:settled_by_alarm", home: this.name, batch, decision }));
        if (decision === "commit") await this.applyStage(batch);
        else await this.abortBatch(batch);
      } catch (e) {
        // Its decider is unreachable: this stage waits (the alarm asks again), the others and the rest of the pass go on.
        console.error(JSON.stringify({ event: "batch:settle_failed", home: this.name, batch, decider, error: String(e) }));
      }
    }
  }

  /** reap: end the attempts whose lease ran out, tell the dispatcher (it aborts their handlers) and emit their events. */
  private reap(now: number): { more: boolean } {
    const reaped = reapOnce(this.store, now);
    this.dispatcher.reaped(reapedFlights(reaped.rows, now));
    this.events.reaped(this.knownHome() ?? "?", reaped.rows, now);
    this.events.emit(reaped.rows, now);
    this.dueForClaims(reaped.rows, now);
    return reaped;
  }

  /** recordAlarmError logs a failed pass and keeps the last one in `meta` for operators; it never throws. */
  private recordAlarmError(now: number, e: unknown, info?: AlarmInvocationInfo): void {
    const error = String(e);
    console.error(JSON.stringify({ event: "alarm:failed", home: this.name, retryCount: info?.retryCount ?? 0, error }));
    try {
      this.store.sql.exec(
        "INSERT INTO meta (key, value) VALUES ('last_alarm_error', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        JSON.stringify({ at: now, error }),
      );
    } catch {
      // Storage itself is failing; the log line above is all we can leave.
    }
  }

  /** arm: set the alarm to the next wake-up, or delete it when nothing waits. */
  async arm(now: number): Promise<void> {
    await this.alarmArm.set(this.wakeAt(now));
  }

  private wakeAt(now: number): number | null {
    const times = [nextWakeAt(this.store, now, this.reporter.deadline(), this.unchanged), this.dispatcher.wakeAt(now), this.stageDeadline(), this.pause.heldBackUntil(now)].filter(
      (t): t is number => t !== null,
    );
    return times.length === 0 ? null : Math.min(...times);
  }

  // ------------------------------------------------------------ internals

  /** stageDeadline: when the oldest staged batch part must be settled (batch-stage.ts); most objects never hold one. */
  private stageDeadline(): number | null {
    if (!this.stagesHeld) return null;
    const at = nextStageDeadline(this.store);
    this.stagesHeld = at !== null;
    return at;
  }

  /**
   * afterWrite, after every committed change: emit the rows' lifecycle events,
   * start dispatching (when `origin` is given and push work is due), tell the
   * catalog, and re-arm the alarm.
   */
  private async afterWrite(now: number, rows: readonly JobRow[] = [], origin: Origin | null = null, report: ReportUrgency = "now"): Promise<void> {
    this.events.emit(rows, now);
    // Fill before arming: a fill under way changes the wake-up push work needs. Not awaited: it may wait on a pool.
    if (origin) void this.dispatcher.fill(origin);
    // Kick before arming: a report in flight changes the deadline the alarm is armed for.
    this.reporter.kick(report);
    await this.arm(now);
  }

  /**
   * reportFor: the rows a write changed, when all are push jobs of types no `waitsFor` names, may wait for the
   * rest of their burst before the catalog hears of them (catalog-report.ts, `hold`); so may none (a fill ending
   * re-arms and changed nothing). Anything else is told as usual.
   */
  private reportFor(rows: readonly JobRow[]): ReportUrgency {
    const { pushTypes, waitedOn } = this.store.config;
    return rows.every((r) => pushTypes.includes(r.type) && !waitedOn.includes(r.type)) ? "hold" : "now";
  }

  /** refused: a holder's write that no longer holds the job is an event (job:lease_lost, naming the write); the outcome passes through. */
  private refused<T extends { ok: true } | Refusal>(write: string, id: string, out: T, now: number): T {
    if (!out.ok && out.code === "lease_lost") {
      const row = getJob(this.store.sql, id);
      if (row) this.events.leaseLost(row, now, write, out.reason);
    }
    return out;
  }

  private async settled<T extends { ok: true; row: JobRow } | { ok: false }>(now: number, outcome: T): Promise<T> {
    // Awaited: once complete, fail or release answers, the pull worker's slot is free for its next claim.
    if (outcome.ok) await this.returnPermits();
    if (outcome.ok) this.dueForClaims([outcome.row], now);
    if (outcome.ok) await this.afterWrite(now, [outcome.row], this.dispatcher.newOrigin());
    return outcome;
  }

  /**
   * dueForClaims: rows of pulled types that are due now wake the claims parked for their type (wait/wait-do.ts).
   * A keyed row that stopped running may have freed its key's follower (of the same type): that counts as due too;
   * when there was none, the woken claim finds nothing and parks again. So may an ordered type's head that
   * stopped running: the job behind it is next.
   */
  private dueForClaims(rows: readonly JobRow[], now: number): void {
    const push = this.store.config.pushTypes;
    const types = new Set<string>();
    for (const r of rows) {
      if (push.includes(r.type)) continue;
      const freed = r.state !== "running" && (r.dedupe_key !== null || this.store.config.typeSettings(r.type).ordered);
      if ((r.state === "pending" && r.run_at <= now) || freed) types.add(r.type);
    }
    if (types.size > 0) this.waits.due(types, now);
  }

  /** renewPermits: a pulled attempt's heartbeat keeps its permits as long as its lease (pull-permits.ts). */
  private async renewPermits(id: string, token: string, ttlMs: number): Promise<void> {
    if (!this.permitsHeld) return;
    for (const [pool, ids] of permitsOfLease(this.store.sql, id, token)) {
      try {
        const lost = await withTimeout(this.env.POOL.getByName(pool).renew(ids, ttlMs), POOL_CALL_TIMEOUT_MS);
        // Only after heartbeats stalled past the permit's TTL, when the lease itself has lapsed: the reap pass ends the attempt.
        if (lost.length > 0) console.warn(JSON.stringify({ event: "pool:permits_lost", pool, job: id, count: lost.length }));
      } catch (e) {
        console.error(JSON.stringify({ event: "pool:renew_failed", pool, job: id, error: String(e) }));
      }
    }
  }

  /**
   * returnPermits: give back the permits of pulled attempts that ended (pull-permits.ts); those in `unrun` (a released
   * lease's) with their rate spend refunded. Skipped while the object holds none: most objects never do.
   */
  private async returnPermits(unrun: ReadonlyMap<string, string[]> = new Map()): Promise<void> {
    if (!this.permitsHeld) return;
    const taken = returnable(this.store, this.clock.now());
    this.permitsHeld = anyPermits(this.store.sql);
    const back: Promise<void>[] = [];
    for (const [pool, ids] of taken) {
      const refunded = new Set(unrun.get(pool) ?? []);
      back.push(this.givePermitsBack(pool, ids.filter((i) => refunded.has(i)), true), this.givePermitsBack(pool, ids.filter((i) => !refunded.has(i)), false));
    }
    await Promise.all(back);
  }

  /** givePermitsBack never throws: a release lost with the object or refused lapses with the permit's TTL. */
  private async givePermitsBack(pool: string, ids: string[], refund: boolean): Promise<void> {
    if (ids.length === 0) return;
    await withTimeout(this.env.POOL.getByName(pool).release(ids, refund), POOL_CALL_TIMEOUT_MS).catch((e: unknown) =>
      console.error(JSON.stringify({ event: "pool:release_failed", pool, error: String(e) })),
    );
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
