/**
 * `edgequeue/worker`: a pull worker for Node (or anything with fetch) that
 * claims jobs of its types over the HTTP API and runs them through the same
 * handler contract as `defineHandlers` — `(payload, ctx)`, the error classes,
 * `ctx.signal`, `ctx.log`, durable steps journaled through the API, fenced by
 * the lease (docs/pull-workers.md "Pull workers").
 *
 * - Claims ask the queue to wait (`waitMs`) for due work instead of polling on
 *   an interval; a failed claim backs off (100 ms doubling to 5 s).
 * - Each job's lease is renewed every third of `leaseMs` by the worker itself;
 *   a heartbeat answered `lease_lost` (or `already_terminal`) aborts the job's
 *   signal and the worker writes nothing more for it — and so does the lease's
 *   end, by this machine's clock, when no renewal was confirmed.
 * - `stop({ timeoutMs })` stops claiming, waits for the handlers in flight,
 *   and past the deadline aborts them (reason `shutdown`) and releases their
 *   jobs: pending again, due now, their attempts not counted; a claim answered
 *   meanwhile gives its jobs back the same way.
 *
 * Here the pieces are put together: claims.ts (one claim) and claim-loop.ts
 * (claiming while slots are free, slots.ts), attempt.ts (one job's run and
 * writes) with lease.ts (its renewals and deadline), completions.ts (sent
 * together, or carried by the next claim), stop.ts (shutdown), api.ts (the
 * HTTP calls) and answers.ts (what the queue's refusals mean).
 *
 * @example
 * const worker = createWorker({ url, token, types: ["email.send"], handlers: { "email.send": send }, concurrency: 8 });
 * worker.installSignalHandlers();
 * await worker.start(); // resolves once stopped (SIGTERM: finish or release what runs, then resolve)
 *
 * @module
 */
import type { WorkerHandlers } from "../runtime/context";
import type { LeasedJob } from "../job/schemas";
import { preflight, refusedForGood } from "./answers";
import { jobPath, queueCall } from "./api";
import { Attempt, type AttemptDeps } from "./attempt";
import { claimLoop } from "./claim-loop";
import { Claims } from "./claims";
import { Completions } from "./completions";
import { Slots } from "./slots";
import { onSignals, stopWorker } from "./stop";

// What a pull handler throws and is given, from the worker's own entry point (no edgequeue/handler import needed).
export { batch, type BatchContext, type BatchHandler, type BatchJob } from "../runtime/batch";
export { ChildJobFailedError, JobAbortedError, NondeterminismError, RetryableJobError, SnoozeJobError, TerminalJobError } from "../runtime/errors";
export type { JobContext, StepOptions, StepRun, EventWaitOptions, InvokeRequest, WaitedEvent, WaitOptions, WaitToken, WorkerHandlers } from "../runtime/context";

export interface WorkerOptions {
  /** The queue's base URL, e.g. https://edgequeue.<you>.workers.dev */
  url: string;
  /** QUEUE_TOKEN. */
  token: string;
  /** Job types this worker claims (1-32). */
  types: string[];
  /** Only jobs carrying at least one of these tags (the enqueue's `tags`); default: any job of the types. */
  tags?: string[];
  /** type → handler function, as for defineHandlers. */
  handlers: WorkerHandlers;
  /** Jobs run at once (default 1); a claim asks for as many as are free, at most 100. */
  concurrency?: number;
  /** Each attempt's lease (default 30 s), renewed every third of it while the handler runs. */
  leaseMs?: number;
  /** This worker's name in the queue (lease owner); default `worker-<random>`. */
  worker?: string;
  /** How long one claim may wait on the queue for due work (default 20 s, at most 30 s). */
  waitMs?: number;
  /** `ctx.env` for the handlers. */
  env?: unknown;
  /** Where the worker's own lines go (claim errors, released jobs); default console.error as JSON. */
  log?: (line: Record<string, unknown>) => void;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /**
   * Called when an attempt ends in an error: `retry` (it will run again) or `failed` (for good). For metrics and
   * alerting; what it throws is logged and ignored, and it changes nothing about the job.
   */
  onError?: (error: string, job: LeasedJob, kind: "retry" | "failed") => void;
  /**
   * How often a running attempt's lease is renewed (default a third of `leaseMs`); false: never by the worker —
   * the handler renews it itself with `ctx.heartbeat()`, or the lease ends at `leaseMs` and the job runs again.
   */
  renewEveryMs?: number | false;
  /**
   * The version of this worker's code (1-100 characters), sent with each attempt's end and shown in the job's
   * timeline (docs/deploy.md "Code that changes under running jobs"). Needs a queue that knows `version`.
   */
  version?: string;
}

export interface Worker {
  /** Claims and runs jobs until stop(); resolves once the worker has stopped. */
  start(): Promise<void>;
  /** One claim (no waiting) and the jobs it got, run to their end; resolves with how many ran. */
  runOnce(): Promise<number>;
  /** Stop claiming; wait up to `timeoutMs` (default 30 s) for handlers in flight, then abort them (`shutdown`) and release their jobs. */
  stop(options?: { timeoutMs?: number }): Promise<void>;
  /** stop() on SIGTERM and SIGINT (never process.exit); returns the uninstaller. */
  installSignalHandlers(options?: { timeoutMs?: number }): () => void;
}

const CLAIM_LIMIT_MAX = 100;

export function createWorker(options: WorkerOptions): Worker {
  if (options.version !== undefined && (typeof options.version !== "string" || options.version.length === 0 || options.version.length > 100)) {
    throw new TypeError(`createWorker: version must be a string of 1-100 characters, got ${JSON.stringify(options.version)}`);
  }
  const root = options.url.replace(/\/+$/, "");
  const leaseMs = options.leaseMs ?? 30_000;
  const waitMs = Math.max(0, Math.min(options.waitMs ?? 20_000, 30_000));
  const log = options.log ?? ((line) => console.error(JSON.stringify(line)));
  const call = queueCall(root, options.token, options.fetch ?? fetch);
  const slots = new Slots<Attempt>(Math.max(1, Math.min(options.concurrency ?? 1, CLAIM_LIMIT_MAX)));
  let stopping = false;
  /** How many times stop() was called: a runOnce() claim answered after one gives its jobs back. */
  let stops = 0;
  let started: Promise<Error | null> | null = null;

  const completions: Completions<Attempt> = new Completions<Attempt>({
    call,
    log,
    ...(options.version !== undefined ? { version: options.version } : {}),
    loopWaiting: () => slots.waiting && !stopping,
    handedOver: (sent) => {
      for (const q of sent) slots.handOff(q.a);
      slots.wake();
    },
  });
  const claims = new Claims<Attempt>({
    call,
    completions,
    body: { worker: options.worker ?? `worker-${Math.random().toString(36).slice(2, 10)}`, types: options.types, ...(options.tags && options.tags.length > 0 ? { tags: options.tags } : {}), leaseMs },
  });
  const attemptDeps: AttemptDeps = {
    call,
    handlers: options.handlers,
    env: options.env,
    leaseMs,
    ...(options.version !== undefined ? { version: options.version } : {}),
    // Renewed every third of the lease (renewEveryMs), by the worker itself, unless told not to.
    renewEveryMs: options.renewEveryMs === false ? null : Math.max(options.renewEveryMs ?? Math.floor(leaseMs / 3), 100),
    log,
    ...(options.onError ? { onError: options.onError } : {}),
    complete: (a, result, logs) => completions.soon(a, result, logs),
    ended: (a) => slots.end(a),
  };
  function run(job: LeasedJob, sentAt: number, group: object): Attempt {
    const a = new Attempt(job, sentAt, attemptDeps, group);
    slots.take(a);
    return a;
  }

  /** release: give a leased job back, pending and due, its attempt not counted (POST /v1/jobs/{id}/release). */
  async function release(job: LeasedJob, signal?: AbortSignal): Promise<void> {
    try {
      await call("POST", `${jobPath(job.id)}/release`, { leaseToken: job.leaseToken }, signal ? { signal } : {});
      log({ event: "worker:released", id: job.id, reason: "shutdown" });
    } catch (e) {
      log({ event: "worker:release_failed", id: job.id, error: String(e) });
    }
  }

  async function loop(): Promise<Error | null> {
    await preflight(call, options.types, root, log);
    const refusal = await claimLoop({
      claim: (limit, wait) => claims.claim(limit, wait),
      waitMs,
      slots,
      run,
      release,
      stopping: () => stopping,
      refusedForGood: (e) => refusedForGood(e, root),
      log,
    });
    // Stopped with completions handed over but not yet carried by a claim: they go alone.
    await completions.send(completions.take());
    return refusal;
  }

  const self: Worker = {
    start() {
      stopping = false;
      const running = (started ??= loop().finally(() => {
        started = null;
      }));
      return running
        .then((refusal) => Promise.all(slots.holding().map((a) => a.done)).then(() => refusal))
        .then((refusal) => {
          if (refusal) throw refusal;
        });
    },
    async runOnce() {
      const asOf = stops;
      const { jobs, since } = await claims.claim(slots.size, 0);
      if (stops !== asOf) {
        // stop() was called while the claim was being answered: what it leased goes back unstarted.
        await Promise.all(jobs.map((job) => release(job)));
        return 0;
      }
      await Promise.all(jobs.map((j, i) => run(j, since[i]!, jobs).done));
      return jobs.length;
    },
    async stop({ timeoutMs = 30_000 } = {}) {
      stopping = true;
      stops++;
      await stopWorker(
        {
          stopClaiming: () => {
            claims.stopWaiting();
            slots.wake();
          },
          unanswered: () => slots.unanswered(),
          holding: () => slots.holding(),
          cutOff: () => claims.cutOff(),
          release,
          loop: () => started,
        },
        timeoutMs,
      );
    },
    installSignalHandlers({ timeoutMs } = {}) {
      return onSignals(() => void self.stop({ timeoutMs }));
    },
  };
  return self;
}
