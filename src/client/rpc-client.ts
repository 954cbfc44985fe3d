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
import type { Job, ListResult, Scope, StatsResult } from "../job/schemas";
import type { Metrics } from "../metrics/schemas";
import type { JobTypeName, PayloadOf } from "../sdk";
import { QueueClientError } from "./errors";

/** A Job whose type and payload follow the registry. */
export type TypedJob<T extends string = JobTypeName> = Omit<Job, "type" | "payload"> & { type: T; payload: PayloadOf<T> };

export interface EnqueueOptions {
  id?: string;
  scope?: Scope;
  dedupeKey?: string;
  priority?: number;
  runAt?: number;
  delayMs?: number;
  maxAttempts?: number;
  timeoutMs?: number;
  tags?: string[];
  dedupeMode?: "active" | "pending";
  coalesce?: "latest";
  debounceMs?: number;
  throttleMs?: number;
}

/** One enqueue: `{ type, payload, ...options }`, typed by the registry per type. */
export type EnqueueInput<T extends JobTypeName = JobTypeName> = { [K in T]: { type: K; payload: PayloadOf<K> } & EnqueueOptions }[T];

export interface ListQuery {
  type?: JobTypeName;
  state?: Job["state"];
  scopeType?: string;
  scopeId?: string;
  tag?: string;
  limit?: number;
  cursor?: string;
}

export interface QueueClient {
  enqueue<T extends JobTypeName>(input: EnqueueInput<T>): Promise<{ job: TypedJob<T>; created: boolean }>;
  /** enqueueMany: 1 to 1,000 jobs in one call, all or none validated first. */
  enqueueMany(inputs: EnqueueInput[]): Promise<{ job: TypedJob; created: boolean }[]>;
  get(id: string): Promise<TypedJob>;
  cancel(id: string, reason?: string): Promise<TypedJob>;
  list(query?: ListQuery): Promise<ListResult>;
  stats(type?: JobTypeName): Promise<StatsResult>;
  /** metrics: per type counts, lag and totals, and per-minute counters of the last `minutes` (default 60). */
  metrics(query?: { type?: JobTypeName; minutes?: number }): Promise<Metrics>;
  /** retryFailed: every failed job of a type and/or scope back to pending (BullMQ's `retryJobs`). */
  retryFailed(filter?: { type?: JobTypeName; scopeType?: string; scopeId?: string }): Promise<{ retried: number; skipped: number }>;
}

/** What the client needs of the binding: the EdgeQueue entrypoint's methods (typed loosely so any stub type fits). */
export interface QueueBinding {
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
  return {
    async enqueue(input) {
      return unwrap(await rpc(binding, "enqueue", input));
    },
    async enqueueMany(inputs) {
      return unwrap<{ results: { job: TypedJob; created: boolean }[] }>(await rpc(binding, "enqueueBatch", { jobs: inputs })).results;
    },
    async get(id) {
      return unwrap<{ job: TypedJob }>(await rpc(binding, "getJob", id)).job;
    },
    async cancel(id, reason) {
      return unwrap<{ job: TypedJob }>(await rpc(binding, "cancelJob", id, reason === undefined ? {} : { reason })).job;
    },
    async list(query = {}) {
      return unwrap(await rpc(binding, "listJobs", query));
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
