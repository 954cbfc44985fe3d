/**
 * What `runJob` (run-job.ts) takes and answers: its options, the run to inspect and resume, its steps, logs and
 * children (docs/handlers.md "Testing a handler").
 *
 * @module
 */
import type { HandlerOutcome, JournalKind, WaitToken } from "../job/handler-contract";
import type { AnyHandler, AnyHandlers } from "../runtime/context";
import type { JsonObject } from "../job/json-safe";
import type { Scope } from "../job/schemas";

export type { AnyHandler, AnyHandlers };

export interface RunOptions {
  /** The job type (default "test.job"; required when `handler` is a map of several types). */
  type?: string;
  /** The job's id (default "test-job"): the default idempotency keys are `<id>:<step>`. */
  id?: string;
  maxAttempts?: number;
  /**
   * The job's backoff, as an enqueue gives it: a retry is due after the delay the queue would choose (exponential with
   * full jitter, or fixed), the handler's `retryAfterMs` a floor on top. Left out: a retry is due after `retryAfterMs`
   * alone (the type's backoff lives in the queue's config, which the kit does not read).
   */
  backoff?: { kind?: "exponential" | "fixed"; baseMs: number; maxMs?: number };
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
  /**
   * Journal the named step's result (or the named wait token, `createWaitToken(name)`), then kill the attempt; named
   * a wait, the queue hears of the wait and the attempt dies after (the job waits as it would: nothing is lost).
   */
  crashAfter?: string;
  /**
   * Run the named step's function, then kill the attempt before its result is journaled; named a wait token, kill
   * the attempt before the queue makes it; named a wait (`waitForSignal(name)`, `waitForEvent(topic)`, an
   * `invoke`'s step, a token's name), kill the attempt before the queue hears of the wait.
   */
  crashBefore?: string;
  /** Signals sent before the first attempt (kept for the job's waits, as the queue keeps one that raced ahead). */
  signals?: { name: string; data?: unknown }[];
  /** Wait tokens completed (by name) before the first attempt: kept for `waitForToken`, as the queue keeps an early completion. */
  tokens?: { name: string; data?: unknown }[];
  /**
   * Events emitted to the job's topics as soon as it waits on them: after each attempt that ends waiting, each event
   * here (in order) that matches an open `waitForEvent` is emitted, ending it (an event emitted before a wait began
   * ends nothing on the queue). One no wait matches stays for a later wait.
   */
  events?: { topic: string; payload: Record<string, unknown>; id?: string }[];
  /** ctx.invoke: what the child under each step name ends with, at once (a child not named here is run by `childHandlers`, or waits for `run.endChild`). */
  childResults?: Record<string, TestChildEnd>;
  /** ctx.invoke: handlers that run the children (each through its own runJob, settled), their ends told to the parent. */
  childHandlers?: AnyHandlers;
}

/** How a child ends: it completes with `result`, or ends in another state (default failed) — ChildJobFailedError in the parent. */
export type TestChildEnd = { result: unknown } | { state?: "failed" | "cancelled" | "superseded" | "expired" | "refused"; error?: string; failureKind?: string };

/** A child the job invoked: its step, id (derived as the queue derives it), request, and how it ended so far. */
export interface TestChild {
  step: string;
  id: string;
  type: string;
  payload: unknown;
  /** "waiting" until it ends. */
  state: "waiting" | "completed" | "failed" | "cancelled" | "superseded" | "expired" | "refused";
}

export type AttemptOptions = Pick<RunOptions, "crashAfter" | "crashBefore">;

export interface TestStep {
  name: string;
  seq: number;
  kind: JournalKind;
  /** The journaled result (parsed); null while an atMostOnce step started and did not finish, or a wait is open. */
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

export type TestState = "pending" | "sleeping" | "waiting" | "completed" | "failed";

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
  /** A failed job's failure kind, as the queue records it: `fatal` (TerminalJobError), `stalled` (a crash on the last attempt) or `retries_exhausted`. */
  readonly failureKind: "fatal" | "stalled" | "retries_exhausted" | "nondeterminism" | null;
  /**
   * When `resume()` runs the next attempt, on the run's clock: a pending or sleeping job's run time (a retry's
   * backoff, a sleep, a snooze), a waiting job's earliest wait timeout — as the queue's `runAt` — and null for a
   * job that waits with no timeout, or has completed or failed.
   */
  readonly dueAt: number | null;
  readonly steps: TestStep[];
  readonly logs: TestLog[];
  /** Every ctx.progress value reported, in order, with its attempt (the queue keeps the latest: docs/handlers.md "Progress"). */
  readonly progress: { attempt: number; value: number | JsonObject }[];
  /** The run's clock (epoch ms). */
  readonly now: number;
  /**
   * Moves the run's clock on to `at` (never back), running nothing: time passes while the job waits or before it is
   * due, as on the queue. A signal, token or event sent next is stamped then, and `resume()` runs the next attempt
   * then. A wait whose timeout has come by then ends with null (the job is pending), as the queue's alarm ends it.
   */
  advanceTo(at: number): TestRun;
  /**
   * Runs the next attempt (after a retry, a crash or a snooze; after a sleep, once its time has passed). A waiting
   * job's clock moves to its earliest wait timeout, which answers null — send a signal first to end the wait.
   */
  resume(options?: AttemptOptions): Promise<TestRun>;
  /**
   * A signal for the job, as `POST /v1/jobs/{id}/signals/{name}` sends it: it ends its wait (the job is pending;
   * `resume()` runs it), or is kept for the wait to come. Answers what the queue would: resumed or kept.
   */
  signal(name: string, data?: unknown): "resumed" | "kept";
  /** A wait token's completion (POST to its path), by the token or its name; a second one throws (the queue's 409). */
  completeToken(token: WaitToken | string, data?: unknown): "resumed" | "kept";
  /**
   * An event emitted to `topic`, as `POST /v1/topics/{topic}/events` emits it: it ends every open
   * ctx.waitForEvent of the topic whose match it fits (the job is pending; `resume()` runs it). An event before
   * the wait began ends nothing, as on the queue. Answers how many waits it ended.
   */
  emit(topic: string, payload: Record<string, unknown>, id?: string): number;
  /** The children the job invoked, in call order. */
  readonly children: TestChild[];
  /** End the child under `step`: the job is due again once no child is open, or at once for one that did not complete. */
  endChild(step: string, end: TestChildEnd): "resumed" | "waiting";
  /** The next attempt with other code: is a change to the handler replay-compatible with jobs already under way? */
  resumeWith(handler: AnyHandler | AnyHandlers, options?: AttemptOptions): Promise<TestRun>;
  /** Resumes until the job completes or fails (at most `limit` more attempts). */
  settle(limit?: number): Promise<TestRun>;
}

