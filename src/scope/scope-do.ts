/**
 * ScopeDO: the jobs of one scope, or of one shard of a type's unscoped jobs.
 *
 * A thin shell over its parts (scope-parts.ts): each RPC method runs one
 * write of writes.ts through the one commit path — the write's transaction,
 * then `FollowUps.run` over the record of what it changed (docs/design.md
 * "One commit path") — or one read, and answers in the wire types of wire.ts
 * (jobs as the API's views, never rows). The alarm (alarm-pass.ts) is the
 * reap and sweep loop and never throws.
 *
 * @module
 */
import type { ErrorGroup } from "../job/schemas/errors";
import { DurableObject } from "cloudflare:workers";
import { systemClock, type Clock } from "../clock";
import type { Env } from "../env";
import type { TerminalState } from "../job/states";
import type { FailOutcome, Job, LeasedJob, StepView } from "../job/schemas";
import type { JobLogLine } from "../job/log-lines";
import type { JournalWrite } from "../job/handler-contract";
import type { PauseSync } from "../catalog/pause-store";
import type { FailedCursor } from "./jobs/change";
import type { ClaimRequest } from "./jobs/claim";
import type { Decision, Publication } from "./batches/batch-stage";
import type { EnqueueRefusal, NewJob } from "./jobs/enqueue";
import { toJob, toLeasedJob } from "./jobs/job-row";
import { pauseAsked } from "./jobs/job-pause";
import type { Lens } from "../sealing/lens";
import type { Outcome } from "./jobs/outcome";
import type { CompleteItem, FailInput } from "./jobs/settle";
import type { SleepInput } from "./workflow/sleep";
import type { ScopeStore } from "./scope-parts";
import type { Written } from "./jobs/changes";
import { writes } from "./writes";
import { wireDeciding, wireEnqueue, wireInline, wireLeased, wirePage, wireSettled, type EnqueueAnswer, type JobPage, type WireDecidingAnswer, type WireEnqueueOutcome, type WireInlineClaim } from "./wire";
import { ScopeParts } from "./scope-parts";
import { Retention } from "./retention/retention";
import { jobTimeline, type TimelineStep } from "./jobs/timeline";
import { getJob, listJobs, type ListFilter } from "./jobs/read";
import { listSteps, signTokens, withJournal } from "./workflow/steps";
import { buildSummary, type HomeSummary } from "./report/summary";
import { jobLogs } from "./jobs/job-logs";
import { Meter, meterRequests } from "../metering/meter";
import type { WaitInput } from "./workflow/waits";
import { signalAnswer, type SignalAnswer } from "./workflow/signals";
import type { OwedItem } from "./workflow/outbox";
import { childrenOf } from "./workflow/invokes";
import type { BulkAction } from "../job/transitions";
import { countPage } from "./jobs/bulk";
import { deadCallbacks, type DeadCallback } from "./watching/callbacks";


type LogItem = { at: number; attempt?: number; message: string; fields?: unknown };

export class ScopeDO extends DurableObject<Env> {
  /** Tests replace these with runInDurableObject. */
  clock: Clock = systemClock;
  random: () => number = Math.random;
  /** Private, so the package's declarations do not spell out its parts (tests reach them with partsOf). */
  private readonly parts: ScopeParts;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.parts = new ScopeParts(ctx, env, this, Meter.install(this, ctx, "scope"));
    // A keep-alive "ping" from a subscriber is answered by the runtime: it neither wakes nor bills the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    void ctx.blockConcurrencyWhile(() => this.parts.start());
  }

  get store(): ScopeStore {
    return this.parts.store;
  }

  /** How this object's answers show values (sealing/lens.ts): a claim's for its handler, every other view for a reader. */
  private get lens(): Lens {
    return this.parts.store.lens;
  }

  /** The object's name, e.g. `scope:Account:a1`. */
  get home(): string {
    return this.parts.home;
  }

  /** w: one write of writes.ts, through the one commit path. A field, not a method: every method is a request (meterRequests). */
  private readonly w = <A>(op: (store: ScopeStore, now: number) => Written<A>): Promise<A> => this.parts.write((now) => op(this.parts.store, now));

  // ------------------------------------------------------------ writes (writes.ts says what each changes)

  async enqueue(jobs: NewJob[], answer: EnqueueAnswer = "jobs"): Promise<WireEnqueueOutcome> {
    return wireEnqueue(this.lens, await this.w((s, now) => writes.enqueue(s, jobs, now)), answer);
  }

  async heartbeat(id: string, token: string, leaseMs: number | null): Promise<Outcome<{ leaseExpiresAt: number }>> {
    return this.w((s, now) => writes.heartbeat(s, id, token, leaseMs, now));
  }

  /** complete: `version`, the code version that ran the attempt (scope/jobs/attempt-end.ts, AttemptEnd `version`). */
  async complete(id: string, token: string, result: string | null, version: string | null = null): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.complete(s, id, token, result, now, version)));
  }

  async completeMany(items: CompleteItem[]): Promise<Outcome<{ id: string }>[]> {
    return this.w((s, now) => writes.completeMany(s, items, now));
  }

  async fail(id: string, token: string, input: FailInput): Promise<Outcome<{ job: Job; outcome: FailOutcome }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.fail(s, id, token, input, now)));
  }

  async release(id: string, token: string): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.release(s, id, token, now)));
  }

  async sleep(id: string, token: string, input: SleepInput): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.sleep(s, id, token, input, now)));
  }

  /**
   * appendStep: a pull worker's journal write; a wait token's (`op: "token"`) is signed first and answered as
   * `result`. `paused`: the job was asked to pause, and the worker ends the attempt after this step (jobs/job-pause.ts).
   */
  async appendStep(write: JournalWrite, token: string): Promise<Outcome<{ job: Job; result?: string; paused?: true }>> {
    const [signed] = write.op === "token" ? await signTokens(this.store, [write], this.clock.now()) : [write];
    const out = await this.w((s, now) => writes.appendStep(s, signed!, token, now));
    if (!out.ok) return out;
    const result = out.result === undefined ? {} : { result: this.lens.handlerText(out.result) };
    return { ok: true, job: toJob(out.row, this.lens), ...result, ...(pauseAsked(out.row) ? { paused: true as const } : {}) };
  }

  async wait(id: string, token: string, input: WaitInput): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.wait(s, id, token, input, now)));
  }

  /** signal: `data` is JSON text; the answer says whether it ended the job's wait or is kept for it, and what the job waits for now. */
  async signal(id: string, name: string, data: string): Promise<SignalAnswer> {
    return signalAnswer(await this.w((s, now) => writes.signal(s, id, "signal", name, data, now)));
  }

  async signalKey(type: string, dedupeKey: string, name: string, data: string): Promise<SignalAnswer> {
    return signalAnswer(await this.w((s, now) => writes.signalKey(s, type, dedupeKey, name, data, now)));
  }

  /** completeToken: a wait token's completion (waits.ts checks it is a token one of this object's jobs made). */
  async completeToken(token: string, data: string): Promise<SignalAnswer> {
    return signalAnswer(await this.w((s, now) => writes.completeToken(s, token, data, now)));
  }

  async resolveStep(id: string, name: string, resultJson: string): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.resolveStep(s, id, name, resultJson, now)));
  }

  /** progress: a pull worker's ctx.progress, fenced by its lease (progress.ts); `value` is JSON text the caller checked. */
  async progress(id: string, token: string, value: string): Promise<Outcome<{ at: number }>> {
    const [answer] = await this.w((s, now) => writes.progress(s, [{ id, token, value }], now));
    return answer!;
  }

  /** appendLogs: a pull worker's ctx.log lines, fenced by its lease (job-logs.ts); they change nothing anyone counts. */
  async appendLogs(id: string, token: string, items: LogItem[]): Promise<Outcome<{ stored: number }>> {
    return this.w((s, now) => writes.appendLogs(s, id, token, items, now));
  }

  /** cancel: `cascade` false leaves the job's children running (docs/workflows.md "Child jobs"). */
  async cancel(id: string, reason: string | null, cascade = true): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.cancel(s, id, reason, now, cascade)));
  }

  /** publish: an event of `topic`, told to its registry (this object, scope:edgequeue.topic:<topic>); answers the waits it ended. */
  async publish(topic: string, eventId: string, payload: string): Promise<number> {
    return this.w((s, now) => writes.publish(s, topic, eventId, payload, now));
  }

  /** deliver: what another object owed this one (scope/workflow/outbox.ts); per item, whether it was applied. */
  async deliver(items: OwedItem[]): Promise<boolean[]> {
    return this.parts.deliver(items);
  }

  async cancelKeys(type: string, keys: string[], reason: string | null): Promise<number> {
    return this.w((s, now) => writes.cancelKeys(s, type, keys, reason, now));
  }

  async cancelAll(pendingOnly: boolean, reason: string | null): Promise<number> {
    return this.w((s, now) => writes.cancelAll(s, pendingOnly, reason, now));
  }

  async retry(id: string): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.retry(s, id, now)));
  }

  /** pause: one job paused, or asked to pause (jobs/job-pause.ts). */
  async pause(id: string): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.pause(s, id, now)));
  }

  /** resume: a paused job pending again, or a pause asked withdrawn (jobs/job-pause.ts). */
  async resume(id: string): Promise<Outcome<{ job: Job }>> {
    return wireSettled(this.lens, await this.w((s, now) => writes.resume(s, id, now)));
  }

  /** rerun: a new job from a finished one (scope/workflow/rerun.ts); `payload` JSON text, or null for the old one's. */
  async rerun(id: string, fromStep: string | null, payload: string | null): Promise<Outcome<{ job: Job }>> {
    const out = await this.w((s, now) => writes.rerun(s, id, { fromStep, payload }, now));
    return out.ok ? { ok: true, job: toJob(out.row, this.lens) } : out;
  }

  /**
   * bulk: a page of the jobs `filter` matches after `afterSeq`, cancelled or retried (bulk.ts) or rerun from
   * `fromStep` or their start (workflow/rerun.ts); `next` goes on from there. A dry run changes nothing and answers
   * how many matched as `changed`.
   */
  async bulk(action: BulkAction, filter: ListFilter, afterSeq: number, limit: number, reason: string | null, dryRun = false, fromStep: string | null = null): Promise<{ changed: number; skipped: number; next: number | null }> {
    if (dryRun) {
      const { matched, next } = countPage(this.store.sql, action, filter, afterSeq, limit);
      return { changed: matched, skipped: 0, next };
    }
    if (action === "rerun") return this.w((s, now) => writes.rerunPage(s, filter, afterSeq, limit, fromStep, now));
    return this.w((s, now) => writes.bulk(s, action, filter, afterSeq, limit, reason, now));
  }

  async retryFailed(type: string | null, after: FailedCursor | null, limit?: number): Promise<{ retried: number; skipped: number; next: FailedCursor | null }> {
    return this.w((s, now) => writes.retryFailed(s, type, after, now, limit));
  }

  async prune(olderThan: number, states: TerminalState[]): Promise<number> {
    return this.parts.write((now) => this.parts.find(Retention).prune(olderThan, states, now));
  }

  async claimOrEnqueue(job: NewJob, worker: string, leaseMs: number): Promise<WireInlineClaim> {
    await this.parts.pause.ensure();
    const out = await this.w((s, now) => writes.claimOrEnqueue(s, job, worker, leaseMs, now));
    return wireInline(this.lens, out.ok && out.leased ? { ...out, leased: withJournal(this.store, out.leased) } : out);
  }

  async claimKey(type: string, dedupeKey: string, worker: string, leaseMs: number): Promise<LeasedJob | null> {
    await this.parts.pause.ensure();
    const row = await this.w((s, now) => writes.claimKey(s, type, dedupeKey, worker, leaseMs, now));
    return row ? toLeasedJob(withJournal(this.store, row), this.lens) : null;
  }

  async claim(req: ClaimRequest): Promise<LeasedJob[]> {
    return wireLeased(this.lens, await this.parts.claim(req));
  }

  // ------------------------------------------------------------ batches over several objects (batch-part.ts)

  async stageBatch(batch: string, decider: string, jobs: NewJob[]): Promise<EnqueueRefusal | null> {
    return this.parts.batches.stage(batch, decider, jobs);
  }

  /** commitDecidingBatch: `publication`, when this object is the topic registry deciding an event's deliveries. */
  async commitDecidingBatch(batch: string, jobs: NewJob[], publication?: Publication): Promise<WireDecidingAnswer> {
    return wireDeciding(this.lens, await this.parts.batches.commitDeciding(batch, jobs, publication));
  }

  /** decideBatch: `proposal` recorded unless a decision is; null proposal: only asks (null while undecided). */
  async decideBatch(batch: string, proposal: Decision | null): Promise<Decision | null> {
    return this.parts.batches.decide(batch, proposal);
  }

  async commitBatch(batch: string, ids: readonly string[]): Promise<WireEnqueueOutcome> {
    return wireEnqueue(this.lens, await this.parts.batches.commit(batch, ids));
  }

  async abortBatch(batch: string): Promise<void> {
    return this.parts.batches.abort(batch);
  }

  // ------------------------------------------------------------ pauses and pokes

  /** applyPause: the catalog shard tells of a pause or resume (catalog/pause-store.ts). */
  async applyPause(sync: PauseSync): Promise<void> {
    this.parts.pause.apply(sync, this.clock.now());
  }

  /** paused: the types paused here, as this object last heard (tests and operators). */
  async paused(): Promise<string[]> {
    return this.parts.pause.paused();
  }

  /** poke: a pool freed a slot this object waited for; `pool` names it (a keyed pool's poke is for one key value). */
  async poke(pool?: string): Promise<void> {
    return this.parts.poke(pool);
  }

  // ------------------------------------------------------------ reads

  async get(id: string): Promise<Job | null> {
    const row = getJob(this.store.sql, id);
    return row ? toJob(row, this.lens) : null;
  }

  async timeline(id: string, limit: number): Promise<{ steps: TimelineStep[]; earlier: number } | null> {
    return jobTimeline(this.store.sql, id, limit);
  }

  /** list: up to `limit` jobs after `afterSeq`, in seq order; `next` goes on from there when more follow. */
  async list(filter: ListFilter, afterSeq: number, limit: number): Promise<JobPage> {
    return wirePage(this.lens, listJobs(this.store.sql, filter, afterSeq, limit + 1), limit);
  }

  /** children: the children a job invoked, in journal order, after position `afterSeq`; null when there is no such job. */
  async children(id: string, afterSeq: number, limit: number): Promise<{ step: string; id: string; seq: number }[] | null> {
    return childrenOf(this.store, id, afterSeq, limit);
  }

  /** getMany: the jobs of these ids held here (a parent's children listed), missing ones left out. */
  async getMany(ids: string[]): Promise<Job[]> {
    return ids.flatMap((id) => {
      const row = getJob(this.store.sql, id);
      return row ? [toJob(row, this.lens)] : [];
    });
  }

  /** deadCallbacks: completion callbacks given up on here, oldest first (callbacks.ts). */
  async deadCallbacks(limit: number): Promise<DeadCallback[]> {
    return deadCallbacks(this.store.sql, limit);
  }

  async logs(id: string): Promise<JobLogLine[] | null> {
    return jobLogs(this.store, id);
  }

  async steps(id: string): Promise<StepView[] | null> {
    return listSteps(this.store, id);
  }

  /** errorGroups: this object's error groups (of `type`, or all): scope/errors/. */
  async errorGroups(type: string | null): Promise<ErrorGroup[]> {
    return this.parts.errors.groups(type, this.parts.now());
  }

  async summary(): Promise<HomeSummary> {
    return buildSummary(this.store, this.home, this.clock.now());
  }

  /** drain: resolves once no handler call is in flight here and every answer is settled (tests, shutdown). */
  async drain(): Promise<void> {
    await this.parts.push.dispatcher.idle();
  }

  /**
   * flushCatalog: resolves once the catalog has every change made so far, and what this object holds in memory to
   * write (its error notes) is written, with the alarm recomputed (tests and operators).
   */
  async flushCatalog(): Promise<void> {
    this.parts.errors.flush();
    await this.parts.report.reporter.flush();
    await this.parts.arm(this.clock.now());
  }

  // ------------------------------------------------------------ live subscriptions (watchers.ts)

  /** fetch: a subscription URL the coordinator checked, opened as a WebSocket (hibernatable) or an event stream. */
  override async fetch(request: Request): Promise<Response> {
    return this.parts.watching.watchers.open(request);
  }

  /** A subscriber's messages are not read (a keep-alive "ping" is answered by the runtime without waking the object). */
  override async webSocketMessage(): Promise<void> {}

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    try {
      ws.close(code, reason);
    } catch {
      // The runtime answered the close already.
    }
    this.parts.watching.watchers.recount();
  }

  override async webSocketError(): Promise<void> {
    this.parts.watching.watchers.recount();
  }

  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    await this.parts.alarm(info);
  }
}

meterRequests(ScopeDO);
