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

/** How long a finished job waits for the rest of its batch before it is reported on its own. */
const EARLY_SETTLE_AFTER_MS = 50;

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
            // The stub broke before the batch ended: the queue's side is gone (its object was reset), so the
            // lease will not be renewed and the job will run again elsewhere. Tell every job still running.
            if (!done) for (const a of aborts.values()) if (!a.signal.aborted) a.abort(new JobAbortedError("lease_lost"));
            return;
          }
          if (!notice) return;
          aborts.get(notice.id)?.abort(new JobAbortedError(notice.reason));
        }
      })();
      const early = new Set<ReturnType<typeof setTimeout>>();
      try {
        return await Promise.all(
          batch.jobs.map(async (job) => {
            const outcome = await runOne(handlers, job, aborts.get(job.id)!.signal, this.env);
            // A job that finishes well before the rest of its batch is reported on its own, so a slow job does not
            // hold it; jobs finishing together travel in the return value only (one message, not one per job).
            if (batch.jobs.length > 1) {
              const timer = setTimeout(() => {
                early.delete(timer);
                if (!done) control.settle(outcome).catch(() => undefined);
              }, EARLY_SETTLE_AFTER_MS);
              early.add(timer);
            }
            return outcome;
          }),
        );
      } finally {
        done = true;
        for (const t of early) clearTimeout(t);
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
    scheduledFor: job.scheduledFor ?? null,
    signal,
    env,
    log: (message, fields = {}) => console.log(JSON.stringify({ event: "job:log", id: job.id, type: job.type, attempt: job.attempt, message, ...fields })),
  };
  let value: unknown;
  try {
    value = await fn(JSON.parse(job.payloadJson), ctx as never);
  } catch (e) {
    return outcomeOf(job.id, e);
  }
  try {
    return { id: job.id, kind: "completed", result: toResult(value) };
  } catch (e) {
    // The work is done; only its result cannot be stored. Retrying would repeat the work, so this is final.
    return { id: job.id, kind: "failed", error: `the handler's result is not JSON-serializable: ${String(e)}` };
  }
}

/** outcomeOf maps a thrown value to an outcome. Checked by name too: a second copy of this SDK in a bundle has its own classes. */
function outcomeOf(id: string, e: unknown): JobOutcome {
  const name = (e as { name?: unknown })?.name;
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof TerminalJobError || name === "TerminalJobError") return { id, kind: "failed", error: message };
  if (e instanceof SnoozeJobError || name === "SnoozeJobError") return { id, kind: "snooze", delayMs: wholeMs((e as SnoozeJobError).delayMs) ?? 0 };
  if (e instanceof RetryableJobError || name === "RetryableJobError") {
    const r = e as RetryableJobError;
    return { id, kind: "retry", error: message, retryAfterMs: wholeMs(r.retryAfterMs), consumesAttempt: r.consumesAttempt };
  }
  return { id, kind: "retry", error: message };
}

const wholeMs = (ms: number | undefined) => (ms === undefined || !Number.isFinite(ms) ? undefined : Math.max(0, Math.round(ms)));

/**
 * A job's result is a JSON object: nothing becomes null, a plain object stays,
 * anything else is wrapped as `{ value }` — all passed through JSON, so what is
 * stored is what `JSON.stringify` makes of it (`undefined` fields dropped, a
 * Date as its ISO string).
 */
function toResult(value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  const json: unknown = JSON.parse(JSON.stringify(value) ?? "null");
  if (json === null) return null;
  if (typeof json === "object" && !Array.isArray(json)) return json as Record<string, unknown>;
  return { value: json };
}
