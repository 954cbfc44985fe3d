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
import type { BatchControlApi, DispatchBatch, HandlerEntrypoint, JobOutcome, JournalAnswer, JournalWrite } from "../job/handler-contract";
import type { Handlers } from "../runtime/context";
import { JobAbortedError } from "../runtime/errors";
import { runOne } from "../runtime/run-one";
import { codeVersion } from "../runtime/code-version";

/** How long a finished job waits for the rest of its batch before it is reported on its own. */
const EARLY_SETTLE_AFTER_MS = 50;

/** A handlers class knows the job types it runs. */
export type HandlersClass<C> = C & { readonly jobTypes: readonly string[] };

export type { HandlerEntrypoint };

/** defineHandlers' options. */
export interface HandlersOptions {
  /**
   * The version of this code, reported with each attempt's outcome and shown in the job's timeline, when the Worker
   * has no version metadata bound as `CF_VERSION_METADATA` (which wins: runtime/code-version.ts; docs/deploy.md
   * "Code that changes under running jobs").
   */
  version?: string;
}

/**
 * handlersOn: the entrypoint class over a base — WorkerEntrypoint in a Worker
 * (index.ts), a plain class in Node (node.ts), where no Workers runtime exists
 * but a handler module must still load for `edgequeue/testing`.
 */
export function handlersOn<E>(Base: new (ctx: any, env: E) => { env: E }, handlers: Handlers<E>, options: HandlersOptions = {}): HandlersClass<new (ctx: any, env: E) => HandlerEntrypoint & { env: E }> {
  if (options.version !== undefined && (typeof options.version !== "string" || options.version.length === 0 || options.version.length > 100)) {
    throw new TypeError(`defineHandlers: options.version must be a string of 1-100 characters, got ${JSON.stringify(options.version)}`);
  }
  return class EdgeQueueHandlers extends Base implements HandlerEntrypoint {
    /** The job types this class runs: createQueue pushes them to it when it runs in the queue's own Worker (edgequeue/server). */
    static readonly jobTypes: readonly string[] = Object.keys(handlers);

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
      const journal = new JournalBatcher(control);
      const version = codeVersion(this.env, options.version);
      const early = new Set<ReturnType<typeof setTimeout>>();
      const settledEarly = new Set<string>();
      try {
        const outcomes = await Promise.all(
          batch.jobs.map(async (job) => {
            const outcome = await runOne(handlers, job, {
              signal: aborts.get(job.id)!.signal,
              env: this.env,
              journal: { write: (w) => journal.write({ ...w, id: job.id }) },
              progress: (value) => control.progress([{ id: job.id, value }]),
              // The call's jobs are one delivery: a batch handler gets them together (runtime/batch.ts).
              batchGroup: batch,
              ...(version !== undefined ? { version } : {}),
            });
            // A job that finishes well before the rest of its batch is reported on its own, so a slow job does not
            // hold it; jobs finishing together travel in the return value only (one message, not one per job).
            if (batch.jobs.length > 1) {
              const timer = setTimeout(() => {
                early.delete(timer);
                if (!done) control.settle(outcome).then(() => settledEarly.add(outcome.id), () => undefined);
              }, EARLY_SETTLE_AFTER_MS);
              early.add(timer);
            }
            return outcome;
          }),
        );
        // The return repeats every outcome; the log lines of one the queue already took need not travel twice.
        return outcomes.map(({ logs, ...o }) => (logs && !settledEarly.has(o.id) ? { ...o, logs } : o) as JobOutcome);
      } finally {
        done = true;
        for (const t of early) clearTimeout(t);
      }
    }
  };
}

/**
 * JournalBatcher: the journal writes the batch's jobs make in one moment (one
 * macrotask) go to the queue in one call, answered together: a batch of jobs
 * finishing a step at once costs one round trip and one transaction, not one
 * per job (docs/handlers.md "Durable steps", Cost).
 */
class JournalBatcher {
  private queued: { write: JournalWrite; resolve: (a: JournalAnswer) => void; reject: (e: unknown) => void }[] = [];

  constructor(private readonly control: BatchControlApi) {}

  write(write: JournalWrite): Promise<JournalAnswer> {
    return new Promise((resolve, reject) => {
      if (this.queued.push({ write, resolve, reject }) === 1) setTimeout(() => void this.flush(), 0);
    });
  }

  private async flush(): Promise<void> {
    const sent = this.queued;
    this.queued = [];
    try {
      const answers = await this.control.journal(sent.map((q) => q.write));
      sent.forEach((q, i) => q.resolve(answers[i] ?? { ok: false, code: "lease_lost", message: "no answer from the queue" }));
    } catch (e) {
      for (const q of sent) q.reject(e);
    }
  }
}
