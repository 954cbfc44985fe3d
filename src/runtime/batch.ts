/**
 * Batch handlers (docs/handlers.md "Batch handlers"): `batch(async (jobs, ctx) => …)` runs the jobs of one delivery
 * — a handler call the queue pushed (up to the type's `batch.maxSize`, gathered for at most `batch.maxWaitMs`), or
 * one claim of a pull worker — in one call of the function.
 *
 * It is a job handler like any other, so everything that runs handlers (defineHandlers, the pull worker, the test
 * kit) runs it job by job through run-one.ts; the jobs of one delivery find each other here: each job's run
 * joins its delivery's group (`BATCH_GROUP` on its context, set by runOne), and the group runs once its jobs have
 * all joined (the next macrotask) — one call per value of the type's `batch.key` (`BATCH_KEY`), when it has one. Each job then ends as its own entry says: a value completes it, an Error fails
 * it as a thrown one would (RetryableJobError, TerminalJobError, SnoozeJobError, or any other: a retry); a throw
 * fails every job of the call. Leases, timeouts, cancels and permits stay each job's own.
 *
 * @module
 */
import type { JobContext, JobHandler } from "./context";
import type { JobTypeName, PayloadOf } from "../sdk";

/** Where runOne puts the job's delivery on its context: the jobs of one delivery share it (an object, or a value). */
export const BATCH_GROUP = Symbol.for("edgequeue.batchGroup");
/** Where runOne puts the value of the type's key (`batch.key`): a delivery's jobs run one value at a time. */
export const BATCH_KEY = Symbol.for("edgequeue.batchKey");

/**
 * One job of a batch, as the batch function sees it: its context's facts, its own `signal` (it aborts when this job
 * is cancelled, times out or loses its lease) and `log` (a line tagged with this job, kept with it), and its payload.
 */
export type BatchJob<T extends string = string> = Pick<JobContext<T>, "id" | "type" | "attempt" | "maxAttempts" | "scope" | "runAt" | "scheduledFor" | "event" | "signal" | "log"> & {
  payload: PayloadOf<T>;
};

export interface BatchContext<E = unknown> {
  /** The handler Worker's own bindings. */
  env: E;
  /** Aborts once every job of the batch has been aborted: nothing is left to do. */
  signal: AbortSignal;
}

/**
 * A batch function: one result per job, in order — a value (the job's result), or an Error (that job fails as if
 * it had thrown it). Returning nothing completes every job with no result; throwing fails every job of the call.
 */
export type BatchHandler<T extends string = string, E = unknown> = (jobs: BatchJob<T>[], ctx: BatchContext<E>) => unknown;

type Item<E> = { payload: unknown; ctx: JobContext<string, E>; resolve: (v: unknown) => void; reject: (e: unknown) => void };

/** batch: a handler that gets the jobs of a delivery together (docs/handlers.md "Batch handlers"). */
export function batch<T extends string = JobTypeName, E = unknown>(fn: BatchHandler<T, E>): JobHandler<T, E> {
  // Per delivery, the jobs joined so far, by their key value ("" without a key).
  const waiting = new Map<unknown, Map<string, Item<E>[]>>();
  const handler = (payload: unknown, ctx: JobContext<string, E>) =>
    new Promise((resolve, reject) => {
      const item: Item<E> = { payload, ctx, resolve, reject };
      const hidden = ctx as unknown as Record<symbol, unknown>;
      const group = hidden[BATCH_GROUP];
      // A job that came alone (the test kit's runJob, an inline claim) is a batch of one.
      if (group === undefined) return void runBatch(fn as BatchHandler<string, E>, [item]);
      const key = typeof hidden[BATCH_KEY] === "string" ? (hidden[BATCH_KEY] as string) : "";
      let byKey = waiting.get(group);
      if (!byKey) {
        waiting.set(group, (byKey = new Map()));
        // The delivery's jobs all start in this macrotask: the next one runs its batches, a key value each.
        setTimeout(() => {
          waiting.delete(group);
          for (const items of byKey!.values()) void runBatch(fn as BatchHandler<string, E>, items);
        }, 0);
      }
      const joined = byKey.get(key);
      if (joined) joined.push(item);
      else byKey.set(key, [item]);
    });
  return handler as unknown as JobHandler<T, E>;
}

async function runBatch<E>(fn: BatchHandler<string, E>, items: Item<E>[]): Promise<void> {
  let results: unknown;
  try {
    results = await fn(items.map(jobOf), { env: items[0]!.ctx.env, signal: allAborted(items.map((i) => i.ctx.signal)) });
  } catch (e) {
    for (const i of items) i.reject(e);
    return;
  }
  if (results === undefined) {
    for (const i of items) i.resolve(undefined);
    return;
  }
  if (!Array.isArray(results) || results.length !== items.length) {
    const got = Array.isArray(results) ? `${results.length} results` : typeof results;
    const e = new Error(`the batch handler returned ${got} for ${items.length} jobs: return one result (or Error) per job, in the jobs' order`);
    for (const i of items) i.reject(e);
    return;
  }
  items.forEach((item, k) => {
    const r: unknown = results[k];
    if (r instanceof Error) item.reject(r);
    else item.resolve(r);
  });
}

function jobOf<E>({ payload, ctx }: Item<E>): BatchJob {
  return {
    id: ctx.id,
    type: ctx.type,
    payload: payload as BatchJob["payload"],
    attempt: ctx.attempt,
    maxAttempts: ctx.maxAttempts,
    scope: ctx.scope,
    runAt: ctx.runAt,
    scheduledFor: ctx.scheduledFor,
    event: ctx.event,
    signal: ctx.signal,
    log: (message, fields) => ctx.log(message, fields),
  };
}

/** allAborted: a signal that aborts once every one of `signals` has. */
function allAborted(signals: AbortSignal[]): AbortSignal {
  const c = new AbortController();
  const check = () => {
    if (!c.signal.aborted && signals.every((s) => s.aborted)) c.abort(signals[0]!.reason);
  };
  for (const s of signals) s.addEventListener("abort", check, { once: true });
  check();
  return c.signal;
}
