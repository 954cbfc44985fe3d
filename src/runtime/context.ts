/**
 * What a handler function receives: `(payload, ctx)`. The same contract for
 * pushed handlers (`defineHandlers`), pulled ones (`edgequeue/worker`), an
 * inline claim's `runClaimed`, and `edgequeue/testing`.
 *
 * @module
 */
import type { Scope } from "../job/schemas";
import type { WaitToken } from "../job/handler-contract";

export type { WaitToken } from "../job/handler-contract";
import type { JobTypeName, JobTypes, PayloadOf } from "../sdk";

/** What `ctx.step` passes the step's function. */
export interface StepRun {
  /** `<job id>:<step name>` unless the step's options name another: give it to the outside API, so a step run twice is done once. */
  idempotencyKey: string;
  /** Aborts with the job's signal, and at the step's `timeoutMs`. */
  signal: AbortSignal;
}

export interface StepOptions {
  /** The key the step's function is given (default `<job id>:<step name>`). */
  idempotencyKey?: string;
  /** Bounds one run of the step: past it the step throws and the attempt is retried. */
  timeoutMs?: number;
  /**
   * Never run twice: if an earlier attempt started this step and did not journal
   * its result, the job fails (naming the step) instead of guessing; an operator
   * resolves it (`POST /v1/jobs/{id}/steps/{name}/resolve`) or retries it to run it again.
   */
  atMostOnce?: boolean;
  /**
   * Its value is never shown: the API, the dashboard, subscriptions and callbacks read `"[redacted]"`; only the job's
   * handler gets it back on a replay (docs/operating.md "Sensitive values").
   */
  sensitive?: boolean;
}

export interface WaitOptions {
  /** How long to wait at most (from when the queue hears of the wait); then the wait answers null. Default: no timeout. */
  timeoutMs?: number;
}

export interface EventWaitOptions extends WaitOptions {
  /** Payload fields the event must have, each with this value (compared as JSON); default {}: any event of the topic. */
  match?: Record<string, unknown>;
}

/** An event a ctx.waitForEvent ended on: its id (the emit's), topic, payload, and when the queue heard of it. */
export interface WaitedEvent<P = Record<string, unknown>> {
  id: string;
  topic: string;
  payload: P;
  at: number;
}

/**
 * A child job (ctx.invoke): an enqueue as `POST /v1/jobs` takes it, without `id` — the child's id is derived from
 * the parent's and the step's name.
 */
export interface InvokeRequest {
  type: string;
  payload: Record<string, unknown>;
  scope?: Scope;
  dedupeKey?: string;
  priority?: number;
  delayMs?: number;
  runAt?: number;
  maxAttempts?: number;
  timeoutMs?: number;
  tags?: string[];
  backoff?: { kind?: "exponential" | "fixed"; baseMs: number; maxMs?: number };
}

export interface JobContext<T extends string = string, E = unknown> {
  id: string;
  type: T;
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
  scope: Scope | null;
  runAt: number;
  /** The schedule slot this job was fired for (epoch ms), kept across retries; null when not from a schedule. */
  scheduledFor: number | null;
  /** A topic consumer's job: the event it delivers (`id`: the emit's event id); null for any other job. */
  event: { id: string; topic: string } | null;
  /**
   * The W3C trace context to continue in your own spans (`traceparent`, `tracestate`): the queue's span of this
   * attempt is its parent, in the trace the enqueue carried; null for a job enqueued without one
   * (docs/operating.md "OpenTelemetry").
   */
  trace: { traceparent: string; tracestate?: string } | null;
  /** Aborts with a JobAbortedError reason: `cancelled`, `timeout` or `lease_lost`. Pass it to fetch and friends. */
  signal: AbortSignal;
  /**
   * A structured log line tagged with the job, kept with it (GET /v1/jobs/{id}/logs) — except while the handler
   * replays journaled steps: the attempt that journaled them kept that line already (docs/handlers.md).
   */
  log(message: string, fields?: Record<string, unknown>): void;
  /**
   * Report how far the job got: a number from 0 to 100, or a JSON object of at most 4 KiB (throws a TypeError for
   * anything else). Kept on the job (`progress`, `progressAt`; the latest value only) and told to whoever watches
   * it (`job:progress`). Reports are sent at most 4 a second, values in between coalesced into the latest; the
   * last one is sent before the attempt's outcome. Resolves once sent; a failed send does not fail the job.
   * docs/handlers.md "Progress".
   */
  progress(value: number | Record<string, unknown>): Promise<void>;
  /** The handler Worker's own bindings. */
  env: E;
  /**
   * A durable step: runs `fn` once and journals its JSON result in the job's own
   * object before returning it; on a later attempt it returns the journaled
   * result without running. Steps are matched by position (the order of the
   * calls) and name: a different name where the journal has another fails the
   * job with NondeterminismError.
   */
  step<R>(name: string, fn: (run: StepRun) => R | Promise<R>, options?: StepOptions): Promise<Awaited<R>>;
  /**
   * Whether this job takes the patched path (docs/deploy.md "Code that changes under running jobs"): true for a job
   * that first reaches this point on code that has the patch, false for one whose journal went past this point
   * before it did — so a deploy keeps running jobs on the path they journaled. `if (await ctx.patched("v2-charge"))
   * { new } else { old }`; remove the old branch once no job that ran it is left.
   */
  patched(name: string): Promise<boolean>;
  /** Durable sleep: the job goes back to pending for `ms` (no call, lease, permit or attempt held), then runs again and every step before it replays. */
  sleep(name: string, ms: number): Promise<void>;
  /**
   * Wait for a signal sent to this job (`POST /v1/jobs/{id}/signals/{name}`, or to its dedupe key: `POST
   * /v1/signals`): its `{ data }`, or null when `timeoutMs` passes first. The job waits in the state `waiting`,
   * holding no call, lease, permit or attempt; a signal sent before the job reached the wait is kept for it
   * (`signals.retainMs`). docs/workflows.md.
   */
  waitForSignal<D = unknown>(name: string, options?: WaitOptions): Promise<{ data: D } | null>;
  /** Make a wait token (signed by the queue) that a person or a webhook completes without the queue's token. */
  createWaitToken(name: string, options?: WaitOptions): Promise<WaitToken>;
  /** Wait for a token's completion: its `{ data }`, or null once the token expires. Waits as waitForSignal does. */
  waitForToken<D = unknown>(token: WaitToken): Promise<{ data: D } | null>;
  /**
   * Wait for an event on a topic (`POST /v1/topics/{topic}/events`): the first one emitted after the queue heard of
   * the wait whose payload has every field of `match` with its value, or null once `timeoutMs` passes. The job
   * waits as for a signal, holding nothing; it works for jobs in any scope. docs/workflows.md.
   */
  waitForEvent<P = Record<string, unknown>>(topic: string, options?: EventWaitOptions): Promise<WaitedEvent<P> | null>;
  /**
   * Run a child job and wait for its result: enqueued once (under its own type's guards, scope, key and
   * priority), the parent waiting in `waiting` meanwhile, holding nothing. A child that does not complete throws
   * ChildJobFailedError. `Promise.all` over many invokes fans out, and the parent runs again once all have ended
   * (or at the first that fails). docs/workflows.md "Child jobs".
   */
  invoke<R = unknown>(name: string, request: InvokeRequest): Promise<R>;
  /** The time of the job's first attempt, the same on every attempt (journaled with its first step). */
  now(): number;
  /** A UUID derived from the job's journaled seed and `label`: the same on every attempt (not a secret). */
  uuid(label: string): string;
  /**
   * Renew the attempt's lease now, for a long stretch of work. A pushed job's lease is renewed by the queue
   * itself while the call is in flight, so this only checks it is still held; a pull worker sends a heartbeat
   * (with `renewEveryMs: false` the handler's own calls are what keep the lease). Rejects with
   * JobAbortedError when the attempt is over (cancelled, timed out, lease lost).
   */
  heartbeat(): Promise<void>;
}

export type JobHandler<T extends string, E> = (payload: PayloadOf<T>, ctx: JobContext<T, E>) => unknown;

export type Handlers<E = unknown> = { [T in JobTypeName]?: JobHandler<T, E> };

/** Handlers of any payload type, registered in JobTypes or not: how a pull worker and the test kit take them. */
export type AnyHandler = (payload: any, ctx: JobContext<any, any>) => unknown;
export type AnyHandlers = Handlers<any> | Record<string, AnyHandler>;

/**
 * What a pull worker takes: registered types' handlers typed by the registry, any other type's with an `any`
 * payload — an intersection, not a union, so every handler function gets a contextual type under
 * `tsc --strict` (a union gave `payload` and `ctx` none: TS7006).
 */
export type WorkerHandlers = keyof JobTypes extends never ? { [type: string]: AnyHandler | undefined } : Handlers<any> & { [type: string]: AnyHandler | undefined };
