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
import type { HandlerOutcome, Journal, JournalAnswer, JournalEntry, JournalStart, JournalWrite } from "../job/handler-contract";
import type { AnyHandler, AnyHandlers, Handlers } from "../handler/context";
import { JobAbortedError } from "../handler/errors";
import { runOne } from "../handler/run-one";
import type { JsonObject } from "../job/json-safe";
import type { Scope } from "../job/schemas";

export type { AnyHandler, AnyHandlers };

export interface RunOptions {
  /** The job type (default "test.job"; required when `handler` is a map of several types). */
  type?: string;
  /** The job's id (default "test-job"): the default idempotency keys are `<id>:<step>`. */
  id?: string;
  maxAttempts?: number;
  scope?: Scope | null;
  /** `ctx.event`: run the handler as a topic consumer delivering this event. */
  event?: { id: string; topic: string };
  /** `ctx.env`. */
  env?: unknown;
  /**
   * The run's clock at its start (epoch ms, default Date.now()): it stamps the journal, `ctx.now()`
   * and wake times, and a resume moves it to the job's due time. `Date.now()` inside the handler
   * stays the real clock (fake it with vi.useFakeTimers if the handler reads it).
   */
  now?: number;
  /** Journal the named step's result, then kill the attempt. */
  crashAfter?: string;
  /** Run the named step's function, then kill the attempt before its result is journaled. */
  crashBefore?: string;
}

export type AttemptOptions = Pick<RunOptions, "crashAfter" | "crashBefore">;

export interface TestStep {
  name: string;
  seq: number;
  kind: "step" | "sleep";
  /** The journaled result (parsed); null while an atMostOnce step started and did not finish. */
  result: unknown;
  attempt: number;
  startedAt: number;
  finishedAt: number | null;
  wakeAt: number | null;
}

export interface TestLog {
  attempt: number;
  message: string;
  fields: Record<string, unknown>;
}

/** How the last attempt ended: a handler outcome, or `crashed` (the attempt died, as a lease expiry). */
export type TestOutcome = HandlerOutcome | { kind: "crashed"; step: string; when: "before" | "after" };

export type TestState = "pending" | "sleeping" | "completed" | "failed";

/** A job under test: its journal, logs and attempts so far, and what ended the last attempt. */
export interface TestRun {
  readonly state: TestState;
  /** Attempts counted so far (as the queue counts them: a sleep or snooze gives its attempt back). */
  readonly attempts: number;
  /** Attempts run so far, counted or not. */
  readonly runs: number;
  readonly outcome: TestOutcome;
  /** The result of a completed job. */
  readonly result: JsonObject | null;
  /** The last error of a failed or retried attempt. */
  readonly error: string | null;
  readonly steps: TestStep[];
  readonly logs: TestLog[];
  /** The run's clock (epoch ms). */
  readonly now: number;
  /** Runs the next attempt (after a retry, a crash or a snooze; after a sleep, once its time has passed). */
  resume(options?: AttemptOptions): Promise<TestRun>;
  /** The next attempt with other code: is a change to the handler replay-compatible with jobs already under way? */
  resumeWith(handler: AnyHandler | AnyHandlers, options?: AttemptOptions): Promise<TestRun>;
  /** Resumes until the job completes or fails (at most `limit` more attempts). */
  settle(limit?: number): Promise<TestRun>;
}

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
  now: number;
  private readonly entries = new Map<number, JournalEntry>();
  private start: JournalStart | null = null;
  private runAt: number;
  private readonly type: string;
  private readonly id: string;
  private readonly maxAttempts: number;

  constructor(
    private handler: AnyHandler | AnyHandlers,
    private readonly payload: JsonObject,
    private readonly options: RunOptions,
  ) {
    this.now = options.now ?? Date.now();
    this.runAt = this.now;
    this.id = options.id ?? "test-job";
    this.maxAttempts = options.maxAttempts ?? 3;
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

  async resume(options: AttemptOptions = {}): Promise<TestRun> {
    if (this.state === "completed" || this.state === "failed") throw new Error(`resume: the job is ${this.state}`);
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

  async attempt(crash: AttemptOptions): Promise<void> {
    this.attempts++;
    this.runs++;
    const attempt = this.attempts;
    const abort = new AbortController();
    let crashed: { step: string; when: "before" | "after" } | null = null;
    const journal: Journal = { start: this.start, entries: [...this.entries.values()] };
    const write = async (w: Omit<JournalWrite, "id">): Promise<JournalAnswer> => {
      // A dead attempt writes nothing more (the queue fences it by its lease).
      if (crashed) return { ok: false, code: "lease_lost", message: "the attempt crashed" };
      if (w.op === "commit" && crash.crashBefore === w.name) {
        crashed = { step: w.name, when: "before" };
        abort.abort(new JobAbortedError("lease_lost"));
        throw new Crash(`crashed before journaling step ${JSON.stringify(w.name)}`);
      }
      const held = this.entries.get(w.seq);
      // As the queue's journal does (scope/steps.ts): a position held by another name, or by a sleep, is nondeterminism.
      if (held && (held.name !== w.name || held.kind !== "step")) {
        return { ok: false, code: "nondeterminism", message: `step ${w.seq} is ${JSON.stringify(held.name)} in the journal, ${JSON.stringify(w.name)} in the code` };
      }
      this.start ??= w.start;
      if (!held || held.finishedAt === null) {
        this.entries.set(w.seq, {
          seq: w.seq,
          name: w.name,
          kind: "step",
          result: w.op === "commit" ? w.result ?? "null" : null,
          startedAt: w.startedAt,
          finishedAt: w.op === "commit" ? this.now : null,
          attempt,
          wakeAt: null,
        });
      }
      if (w.op === "commit" && crash.crashAfter === w.name) {
        crashed = { step: w.name, when: "after" };
        abort.abort(new JobAbortedError("lease_lost"));
        throw new Crash(`crashed after journaling step ${JSON.stringify(w.name)}`);
      }
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
        log: (line) => {
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
        this.runAt = this.now + (out.retryAfterMs ?? 0);
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
    }
  }
}
