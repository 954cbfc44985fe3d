/**
 * QueueClient: the producer's calls (docs/producers.md), written once over the plain calls
 * (client/calls.ts), so the RPC client and the HTTP client are the same client over two transports.
 * Its methods are named for what a producer does (`get`, `cancel`, `list`…) and typed by the job-type
 * registry (`JobTypes`); every other operation the clients offer by its operationId.
 *
 * @module
 */
import { activeTrace } from "../job/trace";
import type { Job, LeasedJob, ListResult, Scope, SignalResult, StatsResult } from "../job/schemas";
import type { JsonObject } from "../job/json-safe";
import type { Metrics } from "../metrics/schemas";
import type { JobTypeName, PayloadOf } from "../sdk";
import type { Calls } from "./calls";
import { withoutUndefined } from "./json-input";
import { noteClaimSent, runClaimed, type ClaimedFn, type LeaseOps, type RunClaimedOptions } from "./run-claimed";

/** A Job whose type and payload follow the registry. */
export type TypedJob<T extends string = JobTypeName> = Omit<Job, "type" | "payload"> & { type: T; payload: PayloadOf<T> };

export interface EnqueueOptions {
  id?: string;
  scope?: Scope;
  dedupeKey?: string;
  /** The key this job's keyed limits count it under, instead of the one its type's key path reads (docs/guards.md "Keyed limits"). */
  concurrencyKey?: string;
  priority?: number;
  runAt?: number;
  delayMs?: number;
  /** 1 to 1,000, or Infinity (RPC) / "unlimited" (HTTP): retried until it succeeds. */
  maxAttempts?: number | "unlimited";
  timeoutMs?: number;
  /** If it has not started by then (epoch ms), it ends `expired` and never runs (docs/guards.md "Expiry before start"). */
  expiresAt?: number;
  /** expiresAt as now + this many ms. */
  expiresInMs?: number;
  tags?: string[];
  /** How the key behaves (docs/guards.md "Keys over time"); cancelRunning and cancelPending: the newest wins ("Cancel for the newest"). */
  dedupeMode?: "active" | "pending" | "cancelRunning" | "cancelPending";
  coalesce?: "latest";
  debounceMs?: number;
  throttleMs?: number;
  /** This job's retry delays instead of its type's: exponential (full jitter, the default) or fixed (baseMs each time). */
  backoff?: { kind?: "exponential" | "fixed"; baseMs: number; maxMs?: number };
  /** W3C trace context its spans continue (docs/operating.md "OpenTelemetry"); default: the active OpenTelemetry context, if any. */
  trace?: { traceparent: string; tracestate?: string };
  /** POST its view to `url` when it ends in a state of `on` (default completed and failed), signed (docs/http-api.md "Completion callbacks"). */
  callback?: { url: string; on?: ("completed" | "failed" | "cancelled" | "superseded" | "expired")[] };
}

/** One enqueue: `{ type, payload, ...options }`, typed by the registry per type. */
export type EnqueueInput<T extends JobTypeName = JobTypeName> = { [K in T]: { type: K; payload: PayloadOf<K> } & EnqueueOptions }[T];

/**
 * An enqueue's answer. `job` is null only when the id belonged to a job that finished and was deleted by
 * retention: the id is still taken for `retention.idempotencyMs` (7 days), and nothing was created.
 */
export type Enqueued<T extends JobTypeName = JobTypeName> = { id: string; created: true; job: TypedJob<T> } | { id: string; created: false; job: TypedJob<T> | null };

/** A batch's answer per job by default: the id (a key's holder, for a duplicate) and whether it was created. */
export interface EnqueuedId {
  id: string;
  created: boolean;
}

export interface ListQuery {
  /** A type, or several (any of them). */
  type?: JobTypeName | JobTypeName[];
  /** A state, or several (any of them). */
  state?: Job["state"] | Job["state"][];
  /** Failed jobs of this kind, or of any of several. */
  failureKind?: NonNullable<Job["failureKind"]> | NonNullable<Job["failureKind"]>[];
  dedupeKey?: string;
  scopeType?: string;
  scopeId?: string;
  tag?: string;
  /** Created (finished) strictly after / before these times, epoch ms. */
  createdAfter?: number;
  createdBefore?: number;
  finishedAfter?: number;
  finishedBefore?: number;
  limit?: number;
  cursor?: string;
}

export interface QueueClient {
  enqueue<T extends JobTypeName>(input: EnqueueInput<T>): Promise<Enqueued<T>>;
  /**
   * enqueueMany: 1 to 1,000 jobs in one call, all or none validated first. Answers each job's id and whether it was
   * created; `{ return: "jobs" }` adds each job's view, as `enqueue` answers (a third slower for a large batch).
   */
  enqueueMany(inputs: EnqueueInput[], options?: { return?: "ids" }): Promise<EnqueuedId[]>;
  enqueueMany(inputs: EnqueueInput[], options: { return: "jobs" }): Promise<Enqueued[]>;
  /**
   * get: a job by its id — or by the id you gave it at enqueue, with its type (`{ type }`) or scope (`{ scopeType,
   * scopeId }`), as BullMQ's `getJob` finds one (docs/http-api.md "Ids").
   */
  get(id: string, where?: { type?: JobTypeName; scopeType?: string; scopeId?: string }): Promise<TypedJob>;
  /** cancel: a pending, running or waiting job; the children it invoked are cancelled too unless `cascade` is false. */
  cancel(id: string, reason?: string, options?: { cascade?: boolean }): Promise<TypedJob>;
  list(query?: ListQuery): Promise<ListResult>;
  stats(type?: JobTypeName): Promise<StatsResult>;
  /** metrics: per type counts, lag and totals, and per-minute counters of the last `minutes` (default 60). */
  metrics(query?: { type?: JobTypeName; minutes?: number }): Promise<Metrics>;
  /** retryFailed: every failed job of a type and/or scope back to pending (BullMQ's `retryJobs`). */
  /** With `limit`, at most that many failed jobs are looked at; pass `nextCursor` back as `cursor` to go on. */
  retryFailed(filter?: { type?: JobTypeName; scopeType?: string; scopeId?: string; limit?: number; cursor?: string }): Promise<{ retried: number; skipped: number; nextCursor: string | null }>;
  /**
   * claimOrEnqueue: enqueue under `dedupeKey` (pending mode) and, when no job of the key is running,
   * get it leased to you in the same transaction — run it now (runClaimed); null: a job of the key is
   * running, and this request waits as its follower (created or coalesced).
   */
  claimOrEnqueue<T extends JobTypeName>(input: EnqueueInput<T> & { dedupeKey: string }, options?: { worker?: string; leaseMs?: number }): Promise<LeasedJob | null>;
  /** runClaimed: run a leased handle (heartbeats, complete), then the key's followers (at most maxDrains); see client/run-claimed.ts. */
  runClaimed(handle: LeasedJob, fn: ClaimedFn, options?: RunClaimedOptions): Promise<JsonObject | undefined>;
  /**
   * signal: end a job's `ctx.waitForSignal(name)` with `{ data }` — the job by id, or the live job of a type that holds
   * a key. A signal the job is not waiting for yet is kept for it (`delivered: "kept"`; docs/workflows.md).
   */
  signal(id: string, name: string, data?: unknown): Promise<SignalResult>;
  signal(to: { type: JobTypeName; dedupeKey: string; scope?: Scope }, name: string, data?: unknown): Promise<SignalResult>;
}

/** producerClient: the producer's calls over either transport's plain calls. */
export function producerClient(calls: Calls): QueueClient {
  const leaseOps: LeaseOps = {
    heartbeat: (id, leaseToken) => calls.heartbeat(id, { leaseToken }),
    complete: (id, leaseToken, result) => calls.complete(id, { leaseToken, ...(result ? { result } : {}) }),
    write: (id, leaseToken, w) => {
      const body = { leaseToken, ...w.body } as never;
      switch (w.path) {
        case "steps":
          return calls.appendStep(id, body);
        case "sleep":
          return calls.sleepJob(id, body);
        case "wait":
          return calls.waitJob(id, body);
        case "logs":
          return calls.appendLogs(id, body);
        case "fail":
          return calls.fail(id, body);
      }
    },
    claimKey: async (req) => (await calls.claimKey(req)).leased,
  };
  // The registry types payloads; the queue checks them as JSON (so `as never` where a registered payload type meets the schema's).
  return {
    enqueue: async (input) => (await calls.enqueue(withoutUndefined(traced(input)) as never)) as never,
    enqueueMany: async (inputs: EnqueueInput[], options: { return?: "ids" | "jobs" } = {}) =>
      (await calls.enqueueBatch({ jobs: withoutUndefined(inputs.map(traced)) as never, ...(options.return ? { return: options.return } : {}) })).results as never,
    get: async (id, where) => (await calls.getJob(id, where === undefined ? undefined : withoutUndefined(where))).job as never,
    cancel: async (id, reason, options = {}) => (await calls.cancelJob(id, { ...(reason === undefined ? {} : { reason }), ...(options.cascade === false ? { cascade: false } : {}) })).job as never,
    // The API takes a list as comma-separated text, as in a query string.
    list: (query = {}) => calls.listJobs(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]))),
    stats: (type) => calls.stats(type === undefined ? {} : { type }),
    metrics: (query = {}) => calls.metrics(query),
    retryFailed: (filter = {}) => calls.retryFailed(filter),
    claimOrEnqueue: async (input, options = {}) => {
      // Its lease began no earlier than this call was sent: runClaimed keeps it from here (client/run-claimed.ts).
      const sentAt = Date.now();
      return noteClaimSent((await calls.claimOrEnqueue({ job: withoutUndefined(input) as never, worker: options.worker ?? "inline", ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) })).leased, sentAt);
    },
    runClaimed: (handle, fn, options) => runClaimed(leaseOps, handle, fn, options),
    signal: (to: string | { type: JobTypeName; dedupeKey: string; scope?: Scope }, name: string, data: unknown = null) =>
      typeof to === "string" ? calls.signalJob(to, name, { data }) : calls.signalKey(withoutUndefined({ ...to, name, data }) as never),
  };
}

/** traced: an enqueue without a `trace` continues the caller's active OpenTelemetry context, when there is one (job/trace.ts). */
function traced<T extends { trace?: unknown }>(input: T): T {
  if (input.trace !== undefined) return input;
  const trace = activeTrace();
  return trace ? { ...input, trace } : input;
}
