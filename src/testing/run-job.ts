/**
 * `edgequeue/testing`: unit-test a handler — stepped or not — in plain vitest
 * or Node, without workerd and without a queue. The handler runs through the
 * same SDK code as in a handler Worker (runtime/run-one.ts, runtime/steps.ts),
 * over an in-memory journal that keeps the queue's rules (test-journal.ts): a
 * step is matched by position and name, a finished step replays its result, a
 * write from a deposed attempt is refused. This module is the run: its
 * attempts, its state, its clock.
 *
 * Crashes are where durable steps earn their keep, so they are first-class:
 * `crashAfter(step)` journals the step's result and then kills the attempt;
 * `crashBefore(step)` lets the step's side effect happen and kills the
 * attempt before its result is journaled — on resume the step runs again, so
 * its idempotency key must make the outside world do it once.
 *
 * @example
 * const run = await runJob(handlers, { order: 42 }, { type: "order.fulfil", crashAfter: "charge" });
 * expect(run.outcome.kind).toBe("crashed");
 * await run.resume();
 * expect(run.state).toBe("completed");
 * expect(run.steps.map((s) => [s.name, s.attempt])).toEqual([["reserve", 1], ["charge", 1], ["ship", 2]]);
 *
 * @module
 */
import type { HandlerOutcome, Journal, JournalAnswer, JournalStart, JournalWrite, WaitToken } from "../job/handler-contract";
import type { AnyHandler, AnyHandlers, Handlers, InvokeRequest } from "../runtime/context";
import { JobAbortedError } from "../runtime/errors";
import { runOne } from "../runtime/run-one";
import type { JsonObject } from "../job/json-safe";
import { retryDelayMs, type Backoff } from "../job/backoff";
import type { AttemptOptions, RunOptions, TestChild, TestChildEnd, TestOutcome, TestRun, TestState, TestStep, TestLog } from "./test-run";
import { resultOf, TestJournal } from "./test-journal";

export type { AnyHandler, AnyHandlers } from "../runtime/context";
export type { AttemptOptions, RunOptions, TestChild, TestChildEnd, TestLog, TestOutcome, TestRun, TestState, TestStep } from "./test-run";

/** runJob runs the first attempt of a job with `payload` through `handler` and returns the run to inspect and resume. */
export async function runJob(handler: AnyHandler | AnyHandlers, payload: JsonObject, options: RunOptions = {}): Promise<TestRun> {
  const run = new Run(handler, payload, options);
  await run.attempt({ crashAfter: options.crashAfter, crashBefore: options.crashBefore });
  return run;
}

/** Thrown into the handler when a test crash kills the attempt. */
class Crash extends Error {
  override readonly name = "TestCrash";
}

class Run implements TestRun {
  state: TestState = "pending";
  attempts = 0;
  runs = 0;
  outcome: TestOutcome = { kind: "retry", error: "not run yet" };
  result: JsonObject | null = null;
  error: string | null = null;
  logs: TestLog[] = [];
  progress: { attempt: number; value: number | JsonObject }[] = [];
  now: number;
  private readonly journal: TestJournal;
  readonly children: TestChild[] = [];
  private emitted = 0;
  /** options.events not emitted yet: each goes once a wait it matches is open. */
  private events: { topic: string; payload: Record<string, unknown>; id?: string }[] = [];
  private start: JournalStart | null = null;
  private runAt: number;
  private readonly type: string;
  private readonly id: string;
  private readonly maxAttempts: number;
  private readonly backoff: Backoff | null;

  constructor(
    private handler: AnyHandler | AnyHandlers,
    private readonly payload: JsonObject,
    private readonly options: RunOptions,
  ) {
    this.now = options.now ?? Date.now();
    this.runAt = this.now;
    this.id = options.id ?? "test-job";
    this.maxAttempts = options.maxAttempts ?? 3;
    this.backoff = options.backoff ? { kind: options.backoff.kind, baseMs: options.backoff.baseMs, maxMs: options.backoff.maxMs ?? Math.max(options.backoff.baseMs, 300_000) } : null;
    this.journal = new TestJournal(options);
    this.events = [...(options.events ?? [])];
    if (typeof handler === "function") this.type = options.type ?? "test.job";
    else {
      const types = Object.keys(handler);
      const type = options.type ?? (types.length === 1 ? types[0] : undefined);
      if (type === undefined || !Object.hasOwn(handler, type)) throw new TypeError(`runJob: say which of ${types.join(", ")} to run (options.type)`);
      this.type = type;
    }
  }

  get steps(): TestStep[] {
    return this.journal.steps;
  }

  get failureKind(): "fatal" | "stalled" | "retries_exhausted" | "nondeterminism" | null {
    return this.state === "failed" ? failureKindOf(this.outcome) : null;
  }

  get dueAt(): number | null {
    if (this.state === "completed" || this.state === "failed") return null;
    if (this.state !== "waiting") return this.runAt;
    // As the queue's runAt of a waiting job: its earliest wait timeout (none: it waits until something ends a wait).
    const until = Math.min(...this.journal.openWaits().map((e) => e.wakeAt ?? Infinity));
    return until === Infinity ? null : until;
  }

  advanceTo(at: number): TestRun {
    this.now = Math.max(this.now, at);
    // As the queue's alarm: a wait whose timeout has come ends with null, and the job is due.
    if (this.state === "waiting" && (this.dueAt ?? Infinity) <= this.now) this.timeOut();
    return this;
  }

  async resume(options: AttemptOptions = {}): Promise<TestRun> {
    if (this.state === "completed" || this.state === "failed") throw new Error(`resume: the job is ${this.state}`);
    if (this.state === "waiting") this.timeOut();
    // A sleeping or delayed job comes due: the clock moves to its time.
    this.now = Math.max(this.now, this.runAt);
    await this.attempt(options);
    return this;
  }

  async resumeWith(handler: AnyHandler | AnyHandlers, options: AttemptOptions = {}): Promise<TestRun> {
    this.handler = handler;
    return this.resume(options);
  }

  async settle(limit = 100): Promise<TestRun> {
    for (let i = 0; i < limit && (this.state === "pending" || this.state === "sleeping"); i++) await this.resume();
    return this;
  }

  signal(name: string, data: unknown = null): "resumed" | "kept" {
    return this.deliver("signal", name, resultOf(data));
  }

  completeToken(token: WaitToken | string, data: unknown = null): "resumed" | "kept" {
    const name = typeof token === "string" ? token : token.name;
    // As the queue (scope/workflow/signals.ts): a finished job refuses first (already_terminal), then a token completed before (conflict).
    if (this.state === "completed" || this.state === "failed") throw new Error(`the job is ${this.state} (the queue answers 409 already_terminal)`);
    this.journal.tokenCompleted(name);
    return this.deliver("token", name, resultOf(data));
  }

  /** deliver: as the queue's signal (scope/workflow/waits.ts): the oldest open wait of the name ends, or it is kept. */
  private deliver(kind: "signal" | "token", name: string, result: string): "resumed" | "kept" {
    if (this.state === "completed" || this.state === "failed") throw new Error(`the job is ${this.state} (the queue answers 409 already_terminal)`);
    if (!this.journal.deliver(kind, name, result, this.now, this.state === "waiting")) return "kept";
    this.due();
    return "resumed";
  }

  emit(topic: string, payload: Record<string, unknown>, id = `test-event-${++this.emitted}`): number {
    if (this.state === "completed" || this.state === "failed") return 0;
    const ended = this.journal.emit(topic, payload, id, this.now);
    if (ended > 0 && this.state === "waiting") this.due();
    return ended;
  }

  /** due: something ended the job's wait: it is pending, due now. */
  private due(): void {
    this.state = "pending";
    this.runAt = this.now;
  }

  /** emitGiven: the events of options.events that a wait now open matches, emitted in order. */
  private emitGiven(): void {
    this.events = this.events.filter((e) => {
      if (this.state !== "waiting" && this.state !== "pending") return true;
      if (this.journal.eventWaitsFor(e.topic, e.payload).length === 0) return true;
      this.emit(e.topic, e.payload, e.id);
      return false;
    });
  }

  endChild(step: string, end: TestChildEnd): "resumed" | "waiting" {
    if (this.state === "completed" || this.state === "failed") throw new Error(`endChild: the job is ${this.state}`);
    const entry = this.journal.openChildren().find((e) => e.name === step);
    if (!entry) throw new Error(`endChild: the job has no open child under step ${JSON.stringify(step)}`);
    const failed = this.journal.endInvoke(entry, this.children.find((c) => c.step === entry.name)!, end, this.now);
    const open = this.journal.openChildren().length > 0;
    if (this.state !== "waiting" || (open && !failed)) return "waiting";
    this.due();
    return "resumed";
  }

  /** runChild: a child run by its handler (its own runJob, settled); null when no handler or result is given for it. */
  private async childEnd(step: string, request: InvokeRequest, id: string): Promise<TestChildEnd | null> {
    const { type, payload } = request;
    const given = this.options.childResults?.[step];
    if (given) return given;
    const handlers = this.options.childHandlers;
    if (!handlers || !Object.hasOwn(handlers, type)) return null;
    const { maxAttempts, backoff, scope } = request;
    const run = await (await runJob(handlers, payload as JsonObject, { type, id, now: this.now, childHandlers: handlers, maxAttempts, backoff, scope: scope ?? null })).settle();
    if (run.state === "completed") return { result: run.result };
    // As the queue tells a parent: the child's own failure kind (a TerminalJobError is fatal, not retries_exhausted).
    if (run.state === "failed") return { state: "failed", error: run.error ?? "failed", failureKind: failureKindOf(run.outcome) };
    throw new Error(`runJob: child ${JSON.stringify(step)} (${type}) is still ${run.state} after settle(): give its end in childResults, or end it with run.endChild`);
  }

  /** timeOut: the clock moves to the earliest timeout of the open waits, which end (null); the job is due. */
  private timeOut(): void {
    this.now = this.journal.timeOut(this.now);
    this.due();
  }

  /** wait: the attempt ended on these waits; a child it invokes is recorded and, when the test gave its end, ended. */
  private async wait(out: Extract<HandlerOutcome, { kind: "wait" }>, attempt: number): Promise<void> {
    this.start ??= out.start;
    const { ended, open } = await this.journal.wait(out, attempt, this.now, this.id, async ({ name, request, id }) => {
      const record: TestChild = { step: name, id, type: request.type, payload: request.payload, state: "waiting" };
      this.children.push(record);
      return { record, end: await this.childEnd(name, request, id) };
    });
    this.state = ended || !open ? "pending" : "waiting";
    this.runAt = this.now;
  }

  async attempt(crash: AttemptOptions): Promise<void> {
    await this.attemptOnce(crash);
    // As the queue: a parent that fails cancels the children it still waits for (scope/workflow/invokes.ts abandonWaits).
    if (this.state === "failed") for (const c of this.children) if (c.state === "waiting") c.state = "cancelled";
  }

  private async attemptOnce(crash: AttemptOptions): Promise<void> {
    this.attempts++;
    this.runs++;
    const attempt = this.attempts;
    const abort = new AbortController();
    let crashed: { step: string; when: "before" | "after" } | null = null;
    const journal: Journal = { start: this.start, entries: [...this.journal.entries.values()] };
    const write = async (w: Omit<JournalWrite, "id">): Promise<JournalAnswer> => {
      // A dead attempt writes nothing more (the queue fences it by its lease).
      if (crashed) return { ok: false, code: "lease_lost", message: "the attempt crashed" };
      if ((w.op === "commit" || w.op === "token") && crash.crashBefore === w.name) {
        crashed = { step: w.name, when: "before" };
        abort.abort(new JobAbortedError("lease_lost"));
        throw new Crash(`crashed before journaling ${w.op === "token" ? "wait token" : "step"} ${JSON.stringify(w.name)}`);
      }
      const answer = this.journal.write(w, this.id, attempt, this.now);
      if (!answer.ok) return answer;
      this.start ??= w.start;
      if ((w.op === "commit" || w.op === "token") && crash.crashAfter === w.name) {
        crashed = { step: w.name, when: "after" };
        abort.abort(new JobAbortedError("lease_lost"));
        throw new Crash(`crashed after journaling ${w.op === "token" ? "wait token" : "step"} ${JSON.stringify(w.name)}`);
      }
      return answer;
    };
    const handlers = (typeof this.handler === "function" ? { [this.type]: this.handler } : this.handler) as Handlers<unknown>;
    const out = await runOne(
      handlers,
      {
        id: this.id,
        type: this.type,
        payloadJson: JSON.stringify(this.payload),
        attempt,
        maxAttempts: this.maxAttempts,
        scope: this.options.scope ?? null,
        runAt: this.runAt,
        scheduledFor: null,
        ...(this.options.event ? { event: this.options.event } : {}),
        dispatchedAt: this.now,
        journal,
      },
      {
        signal: abort.signal,
        env: this.options.env,
        journal: { write },
        clock: () => this.now,
        // Each value as reported (the queue coalesces reports made faster than it keeps them).
        progress: async (json) => void this.progress.push({ attempt, value: JSON.parse(json) as number | JsonObject }),
        progressIntervalMs: 0,
        // The lines the queue keeps: not one logged while replaying journaled steps (docs/handlers.md).
        log: (line, kept) => {
          if (!kept) return;
          const { event: _e, id: _i, type: _t, attempt: _a, message, ...fields } = line as { event: string; id: string; type: string; attempt: number; message: string };
          this.logs.push({ attempt, message, fields });
        },
      },
    );
    if (crashed) {
      // As a lease expiry: the attempt counts, the job is due again (or failed as stalled on its last attempt).
      this.outcome = { kind: "crashed", ...(crashed as { step: string; when: "before" | "after" }) };
      this.error = `the attempt died (test crash ${(crashed as { when: string }).when} step ${JSON.stringify((crashed as { step: string }).step)})`;
      this.state = this.attempts >= this.maxAttempts ? "failed" : "pending";
      return;
    }
    const { id: _id, ...outcome } = out;
    this.outcome = outcome as HandlerOutcome;
    if (out.kind === "wait" && crash.crashBefore !== undefined && out.waits.some((w) => w.name === crash.crashBefore)) {
      // The attempt died before the queue heard of its wait: as a lease expiry, and nothing of the wait journaled.
      this.outcome = { kind: "crashed", step: crash.crashBefore, when: "before" };
      this.error = `the attempt died (test crash before wait ${JSON.stringify(crash.crashBefore)})`;
      this.state = this.attempts >= this.maxAttempts ? "failed" : "pending";
      return;
    }
    switch (out.kind) {
      case "completed":
        this.state = "completed";
        this.result = (out.result ?? null) as JsonObject | null;
        break;
      case "failed":
        this.state = "failed";
        this.error = out.error;
        break;
      case "retry":
        this.error = out.error;
        if (out.consumesAttempt === false) this.attempts--;
        this.state = this.attempts >= this.maxAttempts && out.consumesAttempt !== false ? "failed" : "pending";
        // As the queue (scope attempt-end): the job's backoff, with the handler's retryAfterMs as a floor; none given, the floor alone.
        this.runAt = this.now + (this.backoff ? retryDelayMs(this.backoff, attempt, out.retryAfterMs, Math.random) : (out.retryAfterMs ?? 0));
        break;
      case "snooze":
        this.attempts--;
        this.state = "pending";
        this.runAt = this.now + out.delayMs;
        break;
      case "sleep":
        this.attempts--;
        this.start ??= out.start;
        this.journal.entries.set(out.seq, { seq: out.seq, name: out.name, kind: "sleep", result: null, startedAt: out.startedAt, finishedAt: this.now, attempt, wakeAt: out.until });
        this.state = "sleeping";
        this.runAt = out.until;
        break;
      case "wait":
        this.attempts--;
        await this.wait(out, attempt);
        this.emitGiven();
        // The queue heard of the wait, then the attempt died: the job waits as it would.
        if (crash.crashAfter !== undefined && out.waits.some((w) => w.name === crash.crashAfter)) this.outcome = { kind: "crashed", step: crash.crashAfter, when: "after" };
        break;
    }
  }
}

/** failureKindOf: the failure kind the queue records for a run that failed, by how its last attempt ended. */
function failureKindOf(outcome: TestOutcome): "fatal" | "stalled" | "retries_exhausted" | "nondeterminism" {
  if (outcome.kind === "failed") return outcome.nondeterminism ? "nondeterminism" : "fatal";
  return outcome.kind === "crashed" ? "stalled" : "retries_exhausted";
}
