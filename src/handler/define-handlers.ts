/**
 * defineHandlers: turn a map of job type → async function into the
 * WorkerEntrypoint a handler Worker exports and the queue's type `binding`
 * points at.
 *
 * Each job of a batch runs concurrently. The function's return value is the
 * job's result; a thrown RetryableJobError / TerminalJobError / SnoozeJobError
 * says how the attempt ended; anything else thrown is a retry.
 *
 * `ctx.signal` aborts when the queue cancels the job, when its attempt times
 * out, or when the queue lost its lease. The queue passes an RPC stub with the
 * batch and the SDK keeps one `next()` call pending on it: the notice arrives
 * the moment the queue decides, with no polling and no extra invocation.
 *
 * @example
 * export const Handlers = defineHandlers({
 *   "email.send": async (payload, ctx) => {
 *     const r = await fetch("https://api.example.com/send", { method: "POST", body: JSON.stringify(payload), signal: ctx.signal });
 *     if (r.status === 429) throw new RetryableJobError("rate limited", { retryAfterMs: 30_000 });
 *     return { messageId: (await r.json<{ id: string }>()).id };
 *   },
 * });
 *
 * @module
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import type { BatchControlApi, DispatchBatch, DispatchJob, JobOutcome } from "../dispatch/contract";
import type { Scope } from "../job/schemas";
import type { JobTypeName, PayloadOf } from "../sdk";
import { JobAbortedError, RetryableJobError, SnoozeJobError, TerminalJobError } from "./errors";

export interface JobContext<T extends string = string, E = unknown> {
  id: string;
  type: T;
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
  scope: Scope | null;
  runAt: number;
  /** Aborts with a JobAbortedError reason: `cancelled`, `timeout` or `lease_lost`. Pass it to fetch and friends. */
  signal: AbortSignal;
  /** A structured log line tagged with the job. */
  log(message: string, fields?: Record<string, unknown>): void;
  /** The handler Worker's own bindings. */
  env: E;
}

export type JobHandler<T extends string, E> = (payload: PayloadOf<T>, ctx: JobContext<T, E>) => unknown;

export type Handlers<E = unknown> = { [T in JobTypeName]?: JobHandler<T, E> };

export interface HandlerEntrypoint {
  run(batch: DispatchBatch, control: BatchControlApi): Promise<JobOutcome[]>;
}

export function defineHandlers<E = unknown>(handlers: Handlers<E>): new (ctx: ExecutionContext, env: E) => WorkerEntrypoint<E> & HandlerEntrypoint {
  return class EdgeQueueHandlers extends WorkerEntrypoint<E> implements HandlerEntrypoint {
    async run(batch: DispatchBatch, control: BatchControlApi): Promise<JobOutcome[]> {
      const aborts = new Map(batch.jobs.map((j) => [j.id, new AbortController()]));
      let done = false;
      // One pending next() at a time; it resolves with a job to abort, or null when the batch is over.
      void (async () => {
        while (!done) {
          let notice: Awaited<ReturnType<BatchControlApi["next"]>>;
          try {
            notice = await control.next();
          } catch {
            return; // the call ended and the stub went with it
          }
          if (!notice) return;
          aborts.get(notice.id)?.abort(new JobAbortedError(notice.reason));
        }
      })();
      try {
        return await Promise.all(batch.jobs.map((job) => runOne(handlers, job, aborts.get(job.id)!.signal, this.env)));
      } finally {
        done = true;
      }
    }
  };
}

async function runOne<E>(handlers: Handlers<E>, job: DispatchJob, signal: AbortSignal, env: E): Promise<JobOutcome> {
  const fn = (handlers as Record<string, JobHandler<string, E> | undefined>)[job.type];
  if (!fn) return { id: job.id, kind: "retry", error: `this handler Worker has no handler for job type ${job.type}` };
  const ctx: JobContext<string, E> = {
    id: job.id,
    type: job.type,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    scope: job.scope,
    runAt: job.runAt,
    signal,
    env,
    log: (message, fields = {}) => console.log(JSON.stringify({ event: "job:log", id: job.id, type: job.type, attempt: job.attempt, message, ...fields })),
  };
  try {
    const value = await fn(JSON.parse(job.payloadJson), ctx as never);
    return { id: job.id, kind: "completed", result: toResult(value) };
  } catch (e) {
    if (e instanceof TerminalJobError) return { id: job.id, kind: "failed", error: e.message };
    if (e instanceof SnoozeJobError) return { id: job.id, kind: "snooze", delayMs: e.delayMs };
    if (e instanceof RetryableJobError) {
      return { id: job.id, kind: "retry", error: e.message, retryAfterMs: e.retryAfterMs, consumesAttempt: e.consumesAttempt };
    }
    return { id: job.id, kind: "retry", error: e instanceof Error ? e.message : String(e) };
  }
}

/** A job's result is a JSON object: nothing becomes null, a plain object stays, anything else is wrapped as `{ value }`. */
function toResult(value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "object" && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype) return value as Record<string, unknown>;
  return { value };
}
