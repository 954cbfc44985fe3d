/**
 * createClient: the typed producer client over the queue's RPC entrypoint,
 * for Workers that bind to it (`[[services]] binding = "QUEUE", service =
 * "edgequeue", entrypoint = "EdgeQueue"`). Refusals are thrown as
 * QueueClientError with the API's code.
 *
 * @example
 * const queue = createClient(env.QUEUE);
 * const { job } = await queue.enqueue({ type: "email.send", payload: { to: "a@b.c" }, delayMs: 60_000 });
 *
 * @module
 */
import type { Job, LeasedJob, ListResult, Scope, StatsResult } from "../job/schemas";
import type { JsonObject } from "../job/json-safe";
import { runClaimed, type ClaimedFn, type LeaseOps, type RunClaimedOptions } from "./run-claimed";
import type { Metrics } from "../metrics/schemas";
import type { JobTypeName, PayloadOf } from "../sdk";
import { QueueClientError } from "./errors";
import { withoutUndefined } from "./json-input";

/** A Job whose type and payload follow the registry. */
export type TypedJob<T extends string = JobTypeName> = Omit<Job, "type" | "payload"> & { type: T; payload: PayloadOf<T> };

export interface EnqueueOptions {
  id?: string;
  scope?: Scope;
  dedupeKey?: string;
  priority?: number;
  runAt?: number;
  delayMs?: number;
  /** 1 to 1,000, or Infinity (RPC) / "unlimited" (HTTP): retried until it succeeds. */
  maxAttempts?: number | "unlimited";
  timeoutMs?: number;
  tags?: string[];
  dedupeMode?: "active" | "pending";
  coalesce?: "latest";
  debounceMs?: number;
  throttleMs?: number;
  /** This job's retry delays instead of its type's: exponential (full jitter, the default) or fixed (baseMs each time). */
  backoff?: { kind?: "exponential" | "fixed"; baseMs: number; maxMs?: number };
}

/** One enqueue: `{ type, payload, ...options }`, typed by the registry per type. */
export type EnqueueInput<T extends JobTypeName = JobTypeName> = { [K in T]: { type: K; payload: PayloadOf<K> } & EnqueueOptions }[T];

/**
 * An enqueue's answer. `job` is null only when the id belonged to a job that finished and was deleted by
 * retention: the id is still taken for `retention.idempotencyMs` (7 days), and nothing was created.
 */
export type Enqueued<T extends JobTypeName = JobTypeName> = { id: string; created: true; job: TypedJob<T> } | { id: string; created: false; job: TypedJob<T> | null };

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
  limit?: number;
  cursor?: string;
}

export interface QueueClient {
  enqueue<T extends JobTypeName>(input: EnqueueInput<T>): Promise<Enqueued<T>>;
  /** enqueueMany: 1 to 1,000 jobs in one call, all or none validated first. */
  enqueueMany(inputs: EnqueueInput[]): Promise<Enqueued[]>;
  get(id: string): Promise<TypedJob>;
  cancel(id: string, reason?: string): Promise<TypedJob>;
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
}

/** What the client needs of the binding: the EdgeQueue entrypoint's methods (typed loosely so any stub type fits). */
export interface QueueBinding {
  claimOrEnqueue?(body: unknown): Promise<unknown>;
  claimKey?(body: unknown): Promise<unknown>;
  heartbeat?(id: string, body: unknown): Promise<unknown>;
  complete?(id: string, body: unknown): Promise<unknown>;
  fail?(id: string, body: unknown): Promise<unknown>;
  enqueue(body: unknown): Promise<unknown>;
  enqueueBatch(body: unknown): Promise<unknown>;
  getJob(id: string): Promise<unknown>;
  cancelJob(id: string, body?: unknown): Promise<unknown>;
  listJobs(query?: unknown): Promise<unknown>;
  stats(query?: unknown): Promise<unknown>;
  metrics(query?: unknown): Promise<unknown>;
  retryFailed(body?: unknown): Promise<unknown>;
}

/**
 * Any service binding: `QUEUE: Service` (or `Fetcher`) in a producer's Env.
 * Its type lists only `fetch`, but the RPC methods are there at run time when
 * the binding names `entrypoint = "EdgeQueue"` — so the client takes it as it
 * is, without the producer importing the queue's own classes.
 */
export interface ServiceBindingLike {
  fetch(input: any, init?: any): Promise<unknown>;
}

type RpcAnswer = { ok: true } & Record<string, unknown>;

function unwrap<T>(answer: unknown): T {
  const a = answer as { ok: boolean; error?: { code: string; message: string; details?: unknown } };
  if (a && a.ok === true) {
    const { ok: _ok, ...body } = answer as RpcAnswer;
    return body as T;
  }
  const e = a?.error ?? { code: "internal", message: "malformed answer from the queue" };
  throw new QueueClientError(e.code, e.message, e.details);
}

export function createClient(service: QueueBinding | ServiceBindingLike): QueueClient {
  const binding = service as QueueBinding;
  const leaseOps: LeaseOps = {
    heartbeat: async (id, leaseToken) => unwrap(await rpc(binding, "heartbeat", id, { leaseToken })),
    complete: async (id, leaseToken, result) => unwrap(await rpc(binding, "complete", id, { leaseToken, ...(result ? { result } : {}) })),
    fail: async (id, leaseToken, error) => unwrap(await rpc(binding, "fail", id, { leaseToken, error: error.slice(0, 4000) || "error" })),
    claimKey: async (req) => unwrap<{ leased: LeasedJob | null }>(await rpc(binding, "claimKey", req)).leased,
  };
  return {
    async enqueue(input) {
      return unwrap(await rpc(binding, "enqueue", withoutUndefined(input)));
    },
    async enqueueMany(inputs) {
      return unwrap<{ results: Enqueued[] }>(await rpc(binding, "enqueueBatch", { jobs: withoutUndefined(inputs) })).results;
    },
    async get(id) {
      return unwrap<{ job: TypedJob }>(await rpc(binding, "getJob", id)).job;
    },
    async cancel(id, reason) {
      return unwrap<{ job: TypedJob }>(await rpc(binding, "cancelJob", id, reason === undefined ? {} : { reason })).job;
    },
    async list(query = {}) {
      // The API takes a list as comma-separated text, as in a query string.
      const flat = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]));
      return unwrap(await rpc(binding, "listJobs", flat));
    },
    async stats(type) {
      return unwrap(await rpc(binding, "stats", type === undefined ? {} : { type }));
    },
    async metrics(query = {}) {
      return unwrap(await rpc(binding, "metrics", query));
    },
    async retryFailed(filter = {}) {
      return unwrap(await rpc(binding, "retryFailed", filter));
    },
    async claimOrEnqueue(input, options = {}) {
      return unwrap<{ leased: LeasedJob | null }>(await rpc(binding, "claimOrEnqueue", { job: withoutUndefined(input), worker: options.worker ?? "inline", ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) })).leased;
    },
    async runClaimed(handle, fn, options) {
      return runClaimed(leaseOps, handle, fn, options);
    },
  };
}

/**
 * rpc: call one method of the binding. A binding to the queue's default entrypoint (no
 * `entrypoint = "EdgeQueue"`) has no RPC methods; say how to fix it rather than pass on the
 * runtime's "does not implement the method".
 */
async function rpc(binding: QueueBinding, method: keyof QueueBinding, ...args: unknown[]): Promise<unknown> {
  try {
    // Called as a method of the binding (an RPC stub), never detached from it.
    return await (binding as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
  } catch (e) {
    if (/does not implement|is not a function|WorkerEntrypoint` for RPC/i.test(String(e))) {
      throw new QueueClientError("internal", `the queue binding has no RPC method ${method}: bind the queue with entrypoint = "EdgeQueue" in [[services]] (${String(e)})`);
    }
    throw e;
  }
}
