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

export function createClient(binding: QueueBinding): QueueClient {
  return {
    async enqueue(input) {
      return unwrap(await binding.enqueue(input));
    },
    async enqueueMany(inputs) {
      return unwrap<{ results: { job: TypedJob; created: boolean }[] }>(await binding.enqueueBatch({ jobs: inputs })).results;
    },
    async get(id) {
      return unwrap<{ job: TypedJob }>(await binding.getJob(id)).job;
    },
    async cancel(id, reason) {
      return unwrap<{ job: TypedJob }>(await binding.cancelJob(id, reason === undefined ? {} : { reason })).job;
    },
    async list(query = {}) {
      return unwrap(await binding.listJobs(query));
    },
    async stats(type) {
      return unwrap(await binding.stats(type === undefined ? {} : { type }));
    },
    async metrics(query = {}) {
      return unwrap(await binding.metrics(query));
    },
    async retryFailed(filter = {}) {
      return unwrap(await binding.retryFailed(filter));
    },
  };
}
