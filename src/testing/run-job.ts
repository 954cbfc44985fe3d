/**
 * `edgequeue/testing`: unit-test a handler — stepped or not — in plain vitest
 * or Node, without workerd and without a queue. The handler runs through the
 * same SDK code as in a handler Worker (run-one.ts, steps.ts), over an
 * in-memory journal that keeps the queue's rules: a step is matched by
 * position and name, a finished step replays its result, a write from a
 * deposed attempt is refused.
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
import type { HandlerOutcome, Journal, JournalAnswer, JournalEntry, JournalStart, JournalWrite, WaitToken } from "../job/handler-contract";
import type { AnyHandler, AnyHandlers, Handlers, InvokeRequest } from "../runtime/context";
import { JobAbortedError } from "../runtime/errors";
import { runOne } from "../runtime/run-one";
import type { JsonObject } from "../job/json-safe";
import { canonicalJson } from "../job/canonical-json";
import { childLocalId } from "../job/derived-id";
import { retryDelayMs, type Backoff } from "../job/backoff";
import type { AttemptOptions, RunOptions, TestChild, TestChildEnd, TestOutcome, TestRun, TestState, TestStep, TestLog } from "./test-run";

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
  private readonly entries = new Map<number, JournalEntry>();
  /** Signals and token completions sent before their wait (the queue's job_signal). */
  private readonly kept: { kind: "signal" | "token"; name: string; result: string }[] = [];
  private readonly completedTokens = new Set<string>();
  readonly children: TestChild[] = [];
  /** Each open event wait's match, by position. */
  private readonly matches = new Map<number, Record<string, unknown>>();
  private emitted = 0;
  private readonly emittedIds = new Set<string>();
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
    for (const sig of options.signals ?? []) this.kept.push({ kind: "signal", name: sig.name, result: resultOf(sig.data) });
    for (const t of options.tokens ?? []) {
      this.completedTokens.add(t.name);
      this.kept.push({ kind: "token", name: t.name, result: resultOf(t.data) });
    }
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
    return [...this.entries.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((e) => ({ ...e, result: e.result === null ? null : (JSON.parse(e.result) as unknown) }));
  }

  get failureKind(): "fatal" | "stalled" | "retries_exhausted" | null {
    return this.state === "failed" ? failureKindOf(this.outcome) : null;
  }

  get dueAt(): number | null {
    if (this.state === "completed" || this.state === "failed") return null;
    if (this.state !== "waiting") return this.runAt;
    // As the queue's runAt of a waiting job: its earliest wait timeout (none: it waits until something ends a wait).
    const until = Math.min(...this.openWaits().map((e) => e.wakeAt ?? Infinity));
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
    if (this.completedTokens.has(name)) throw new Error(`completeToken: wait token ${JSON.stringify(name)} was completed already (the queue answers 409)`);
    this.completedTokens.add(name);
    return this.deliver("token", name, resultOf(data));
  }

  /** deliver: as the queue's signal (scope/workflow/waits.ts): the oldest open wait of the name ends, or it is kept. */
  private deliver(kind: "signal" | "token", name: string, result: string): "resumed" | "kept" {
    if (this.state === "completed" || this.state === "failed") throw new Error(`the job is ${this.state} (the queue answers 409 already_terminal)`);
    const waitKind = kind === "signal" ? "signal" : "token_wait";
    const open = this.state === "waiting" ? this.openWaits().find((e) => e.kind === waitKind && e.name === name) : undefined;
    if (!open) {
      this.kept.push({ kind, name, result });
      return "kept";
    }
    this.entries.set(open.seq, { ...open, result, finishedAt: this.now });
    this.state = "pending";
    this.runAt = this.now;
    return "resumed";
  }

  emit(topic: string, payload: Record<string, unknown>, id = `test-event-${++this.emitted}`): number {
    if (this.state === "completed" || this.state === "failed") return 0;
    // As the queue: the same event id again ends nothing.
    if (this.emittedIds.has(id)) return 0;
    this.emittedIds.add(id);
    const open = this.eventWaitsFor(topic, payload);
    for (const e of open) this.entries.set(e.seq, { ...e, result: JSON.stringify({ id, topic, payload, at: this.now }), finishedAt: this.now });
    if (open.length > 0 && this.state === "waiting") {
      this.state = "pending";
      this.runAt = this.now;
    }
    return open.length;
  }

  /** eventWaitsFor: the open event waits an event of `topic` with `payload` ends (their match, compared as canonical JSON, as the queue does). */
  private eventWaitsFor(topic: string, payload: Record<string, unknown>): JournalEntry[] {
    return [...this.entries.values()]
      .filter((e) => e.kind === "event" && e.name === topic && e.finishedAt === null)
      .filter((e) => Object.entries(this.matches.get(e.seq) ?? {}).every(([k, v]) => Object.hasOwn(payload, k) && canonicalJson(payload[k]) === canonicalJson(v)));
  }

  /** emitGiven: the events of options.events that a wait now open matches, emitted in order. */
  private emitGiven(): void {
    this.events = this.events.filter((e) => {
      if (this.state !== "waiting" && this.state !== "pending") return true;
      if (this.eventWaitsFor(e.topic, e.payload).length === 0) return true;
      this.emit(e.topic, e.payload, e.id);
      return false;
    });
  }

  endChild(step: string, end: TestChildEnd): "resumed" | "waiting" {
    if (this.state === "completed" || this.state === "failed") throw new Error(`endChild: the job is ${this.state}`);
    const entry = [...this.entries.values()].find((e) => e.kind === "invoke" && e.name === step && e.finishedAt === null);
    if (!entry) throw new Error(`endChild: the job has no open child under step ${JSON.stringify(step)}`);
    const failed = this.endInvoke(entry, end);
    const open = [...this.entries.values()].some((e) => e.kind === "invoke" && e.finishedAt === null);
    if (this.state !== "waiting" || (open && !failed)) return "waiting";
    this.state = "pending";
    this.runAt = this.now;
    return "resumed";
  }

  /** endInvoke: as the queue's endInvoke (scope/workflow/invokes.ts): the entry ends with the child's outcome; true when it did not complete. */
  private endInvoke(entry: JournalEntry, end: TestChildEnd): boolean {
    const child = this.children.find((c) => c.step === entry.name)!;
    const done = "result" in end;
    const state = done ? "completed" : (end.state ?? "failed");
    child.state = state;
    const result = done ? end.result : null;
    const error = done ? null : (end.error ?? `the child ${state}`);
    const failureKind = done ? null : state === "failed" ? (end.failureKind ?? "retries_exhausted") : null;
    // The entry's result as the queue journals it: a completed child's result alone, else its error and failure kind.
    const ended = done ? { child: child.id, state, result: result ?? null } : { child: child.id, state, result: null, error, failureKind };
    this.entries.set(entry.seq, { ...entry, result: JSON.stringify(ended), finishedAt: this.now });
    return !done;
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

  private openWaits(): JournalEntry[] {
    return [...this.entries.values()].filter((e) => (e.kind === "signal" || e.kind === "token_wait" || e.kind === "event") && e.finishedAt === null).sort((a, b) => a.seq - b.seq);
  }

  /** timeOut: the clock moves to the earliest timeout of the open waits, which end (null). */
  private timeOut(): void {
    const open = this.openWaits();
    const until = Math.min(...open.map((e) => e.wakeAt ?? Infinity));
    if (until === Infinity) {
      const children = [...this.entries.values()].filter((e) => e.kind === "invoke" && e.finishedAt === null);
      if (children.length > 0) throw new Error(`resume: the job waits for its children ${children.map((e) => JSON.stringify(e.name)).join(", ")}: end them with run.endChild(step, end), or give childResults / childHandlers`);
      throw new Error(`resume: the job waits for ${open.map((e) => JSON.stringify(e.name)).join(", ")} with no timeout: send it with run.signal(name, data) or run.completeToken(token, data)`);
    }
    this.now = Math.max(this.now, until);
    for (const e of open) if ((e.wakeAt ?? Infinity) <= this.now) this.entries.set(e.seq, { ...e, result: "null", finishedAt: this.now });
    this.state = "pending";
    this.runAt = this.now;
  }

  /** wait: the attempt ended on these waits (scope/workflow/waits.ts wait, in memory). */
  private async wait(out: Extract<HandlerOutcome, { kind: "wait" }>, attempt: number): Promise<void> {
    this.start ??= out.start;
    let ended = false;
    for (const w of out.waits) {
      const held = this.entries.get(w.seq);
      if (held && held.finishedAt !== null) {
        ended = true;
        continue;
      }
      if (w.kind === "event") {
        // As the queue: an event counts only once the wait began, so nothing kept ends it; run.emit does.
        const until = held ? held.wakeAt : w.timeoutMs === undefined || w.timeoutMs === null ? null : this.now + w.timeoutMs;
        const entry: JournalEntry = held ?? { seq: w.seq, name: w.name, kind: "event", result: null, startedAt: w.startedAt, finishedAt: null, attempt, wakeAt: until };
        if (!held) this.matches.set(w.seq, w.match ?? {});
        if (until !== null && until <= this.now) {
          this.entries.set(w.seq, { ...entry, result: "null", finishedAt: this.now });
          ended = true;
        } else this.entries.set(w.seq, entry);
        continue;
      }
      if (w.kind === "invoke") {
        if (held) continue;
        const request = w.request as InvokeRequest;
        const id = childLocalId(this.id, w.seq);
        const entry: JournalEntry = { seq: w.seq, name: w.name, kind: "invoke", result: null, startedAt: w.startedAt, finishedAt: null, attempt, wakeAt: null };
        this.entries.set(w.seq, entry);
        this.children.push({ step: w.name, id, type: request.type, payload: request.payload, state: "waiting" });
        const end = await this.childEnd(w.name, request, id);
        // As the queue: the job is due again at a child that did not complete, or once none is left open (below).
        if (end && this.endInvoke(entry, end)) ended = true;
        continue;
      }
      const until = held ? held.wakeAt : (w.until ?? (w.timeoutMs === undefined || w.timeoutMs === null ? null : this.now + w.timeoutMs));
      const entry: JournalEntry = held ?? { seq: w.seq, name: w.name, kind: w.kind, result: null, startedAt: w.startedAt, finishedAt: null, attempt, wakeAt: until };
      const k = this.kept.findIndex((x) => x.kind === (w.kind === "signal" ? "signal" : "token") && x.name === w.name);
      if (k >= 0) {
        this.entries.set(w.seq, { ...entry, result: this.kept[k]!.result, finishedAt: this.now });
        this.kept.splice(k, 1);
        ended = true;
      } else if (until !== null && until <= this.now) {
        this.entries.set(w.seq, { ...entry, result: "null", finishedAt: this.now });
        ended = true;
      } else this.entries.set(w.seq, entry);
    }
    const open = [...this.entries.values()].some((e) => e.finishedAt === null && (e.kind === "invoke" || e.kind === "signal" || e.kind === "token_wait" || e.kind === "event"));
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
    const journal: Journal = { start: this.start, entries: [...this.entries.values()] };
    const write = async (w: Omit<JournalWrite, "id">): Promise<JournalAnswer> => {
      // A dead attempt writes nothing more (the queue fences it by its lease).
      if (crashed) return { ok: false, code: "lease_lost", message: "the attempt crashed" };
      if ((w.op === "commit" || w.op === "token") && crash.crashBefore === w.name) {
        crashed = { step: w.name, when: "before" };
        abort.abort(new JobAbortedError("lease_lost"));
        throw new Crash(`crashed before journaling ${w.op === "token" ? "wait token" : "step"} ${JSON.stringify(w.name)}`);
      }
      const held = this.entries.get(w.seq);
      const kind = w.op === "token" ? "token" : "step";
      // As the queue's journal does (scope/workflow/steps.ts): a position held by another name, or by a sleep, is nondeterminism.
      if (held && (held.name !== w.name || held.kind !== kind)) {
        return { ok: false, code: "nondeterminism", message: `step ${w.seq} is ${JSON.stringify(held.name)} in the journal, ${JSON.stringify(w.name)} in the code` };
      }
      this.start ??= w.start;
      if (!held || held.finishedAt === null) {
        this.entries.set(w.seq, {
          seq: w.seq,
          name: w.name,
          kind,
          result: w.op === "commit" ? w.result ?? "null" : w.op === "token" ? JSON.stringify(testToken(this.id, w.name, w.result, this.now)) : null,
          startedAt: w.startedAt,
          finishedAt: w.op === "begin" ? null : this.now,
          attempt,
          wakeAt: null,
        });
      }
      if ((w.op === "commit" || w.op === "token") && crash.crashAfter === w.name) {
        crashed = { step: w.name, when: "after" };
        abort.abort(new JobAbortedError("lease_lost"));
        throw new Crash(`crashed after journaling ${w.op === "token" ? "wait token" : "step"} ${JSON.stringify(w.name)}`);
      }
      if (w.op === "token") return { ok: true, result: this.entries.get(w.seq)!.result! };
      return { ok: true };
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
        this.entries.set(out.seq, { seq: out.seq, name: out.name, kind: "sleep", result: null, startedAt: out.startedAt, finishedAt: this.now, attempt, wakeAt: out.until });
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
function failureKindOf(outcome: TestOutcome): "fatal" | "stalled" | "retries_exhausted" {
  return outcome.kind === "failed" ? "fatal" : outcome.kind === "crashed" ? "stalled" : "retries_exhausted";
}

function resultOf(data: unknown): string {
  return `{"data":${JSON.stringify(data ?? null)}}`;
}

/** testToken: a wait token as the queue answers one (job/wait-token.ts), unsigned: nothing here checks it. */
function testToken(jobId: string, name: string, request: string | null, now: number): WaitToken {
  const timeoutMs = (JSON.parse(request ?? "{}") as { timeoutMs?: number | null }).timeoutMs ?? null;
  const id = `test-token.${encodeURIComponent(jobId)}.${encodeURIComponent(name)}`;
  return { id, name, path: `/v1/tokens/${id}`, url: null, expiresAt: timeoutMs === null ? null : now + timeoutMs };
}
