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
 *   signal and the worker writes nothing more for it.
 * - `stop({ timeoutMs })` stops claiming, waits for the handlers in flight,
 *   and past the deadline aborts them (reason `shutdown`) and releases their
 *   jobs: pending again, due now, their attempts not counted.
 *
 * @example
 * const worker = createWorker({ url, token, types: ["email.send"], handlers: { "email.send": send }, concurrency: 8 });
 * worker.installSignalHandlers();
 * await worker.start(); // resolves once stopped (SIGTERM: finish or release what runs, then resolve)
 *
 * @module
 */
import type { JobOutcome, JournalAnswer, JournalWrite } from "../dispatch/contract";
import { JobAbortedError } from "../handler/errors";
import { runOne } from "../handler/run-one";
import type { CompleteManyResult, LeasedJob } from "../job/schemas";
import type { WorkerHandlers } from "../handler/context";
import { eventOfTags } from "../job/event-tags";
import { ApiError, preflight, refusedForGood, refusesField } from "./answers";

// What a pull handler throws and is given, from the worker's own entry point (no edgequeue/handler import needed).
export { JobAbortedError, NondeterminismError, RetryableJobError, SnoozeJobError, TerminalJobError } from "../handler/errors";
export type { JobContext, StepOptions, StepRun, WorkerHandlers } from "../handler/context";

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


interface Running {
  job: LeasedJob;
  abort: AbortController;
  /** false once the lease is lost or the job released: nothing more is written for it. */
  live: boolean;
  done: Promise<void>;
}

interface Completion {
  r: Running;
  result: object | undefined;
  /** The attempt's ctx.log lines, kept with the job when the completion lands. */
  logs: JobOutcome["logs"];
  resolve: () => void;
}

type CompletionAnswer = CompleteManyResult["results"][number];

const CLAIM_LIMIT_MAX = 100;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

export function createWorker(options: WorkerOptions): Worker {
  const root = options.url.replace(/\/+$/, "");
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 1, CLAIM_LIMIT_MAX));
  const leaseMs = options.leaseMs ?? 30_000;
  const waitMs = Math.max(0, Math.min(options.waitMs ?? 20_000, 30_000));
  const name = options.worker ?? `worker-${Math.random().toString(36).slice(2, 10)}`;
  const doFetch = options.fetch ?? fetch;
  const log = options.log ?? ((line) => console.error(JSON.stringify(line)));
  const tagged = options.tags && options.tags.length > 0 ? { tags: options.tags } : {};
  const renewEvery = options.renewEveryMs === false ? null : Math.max(options.renewEveryMs ?? Math.floor(leaseMs / 3), 100);
  /** Set when the queue refused the worker for good (a wrong token or URL): start() rejects with it. */
  let fatal: Error | null = null;
  const running = new Map<string, Running>();
  let stopping = false;
  let started: Promise<void> | null = null;
  let claimAbort: AbortController | null = null;
  /** The claim carrying completions, if one is on its way (stop() aborts it only past its deadline). */
  let carryAbort: AbortController | null = null;
  /** Completions ride with claims until a queue refuses the field (one older than `complete`). */
  let carrying = true;
  /** A completion carries its job's log lines until a queue refuses the field (one older than complete items' `logs`). */
  let logsRide = true;
  let slotFreed: (() => void) | null = null;

  async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await doFetch(`${root}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (!res.ok) {
      const e = (parsed as { error?: { code: string; message: string; details?: unknown } }).error;
      throw new ApiError(res.status, e?.code ?? "internal", e?.message ?? `HTTP ${res.status}`, e?.details);
    }
    return parsed as T;
  }
  const jobPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;

  async function claim(limit: number, wait: number): Promise<LeasedJob[]> {
    const carry = carried;
    carried = [];
    const live = carry.filter((q) => q.r.live);
    if (live.length > 0) {
      // The completions this claim carries are applied first and answered with it; such a claim does not wait, and
      // stop() aborts it only past its deadline: it answers at once, and the completions must not be lost.
      carryAbort = new AbortController();
      try {
        const body = { worker: name, types: options.types, ...tagged, limit, leaseMs, complete: completionItems(live) };
        const out = await call<{ jobs: LeasedJob[]; completed?: CompletionAnswer[] }>("POST", "/v1/claim", body, carryAbort.signal);
        answerCompletions(live, out.completed ?? []);
        return out.jobs;
      } catch (e) {
        // Whether they landed is unknown: they go again alone (a completion that landed answers already_terminal).
        // A queue that predates `complete` refuses the field: from then on completions go alone.
        if (refusesField(e, "complete")) carrying = false;
        await sendCompletions(live);
        throw e;
      } finally {
        carryAbort = null;
        for (const q of carry) q.resolve();
      }
    }
    for (const q of carry) q.resolve();
    claimAbort = new AbortController();
    try {
      const body = { worker: name, types: options.types, ...tagged, limit, leaseMs, ...(wait > 0 ? { waitMs: wait } : {}) };
      return (await call<{ jobs: LeasedJob[] }>("POST", "/v1/claim", body, claimAbort.signal)).jobs;
    } finally {
      claimAbort = null;
    }
  }

  /** Writes for a job: skipped once its lease is gone (a deposed attempt writes nothing). */
  async function write(r: Running, path: string, body: Record<string, unknown>): Promise<void> {
    if (!r.live) return;
    try {
      await call("POST", `${jobPath(r.job.id)}/${path}`, { leaseToken: r.job.leaseToken, ...body });
    } catch (e) {
      if (e instanceof ApiError && (e.code === "lease_lost" || e.code === "already_terminal")) lost(r);
      else log({ event: "worker:write_failed", id: r.job.id, path, error: String(e) });
    }
  }

  /**
   * Completions of one moment go in one request, answered per job: a worker whose jobs finish together makes one
   * call and the queue one transaction, not one of each per job. When the loop is waiting for a free slot, their
   * slots are freed at once and its next claim carries them (POST /v1/claim `complete`): a busy worker's cycle is
   * then one request, not a complete and a claim. Otherwise they go alone (POST /v1/jobs/complete).
   */
  let completions: Completion[] = [];
  /** Completions handed to the loop's next claim. */
  let carried: Completion[] = [];
  /** Jobs whose slot went back before their completion was answered: stop() waits for them too. */
  const handedOff = new Set<Running>();
  function completeSoon(r: Running, result: object | undefined, logs: Completion["logs"]): Promise<void> {
    if (!r.live) return Promise.resolve();
    return new Promise((resolve) => {
      if (completions.push({ r, result, logs, resolve }) === 1) setTimeout(() => void flushCompletions(), 0);
    });
  }
  async function flushCompletions(): Promise<void> {
    const sent = completions;
    completions = [];
    if (slotFreed && !stopping && carrying) {
      for (const q of sent) {
        if (running.get(q.r.job.id) === q.r) running.delete(q.r.job.id);
        handedOff.add(q.r);
      }
      carried.push(...sent);
      slotFreed();
      return;
    }
    await sendCompletions(sent);
  }
  async function sendCompletions(sent: Completion[]): Promise<void> {
    const live = sent.filter((q) => q.r.live);
    try {
      if (live.length > 0) await postCompletions(live);
    } finally {
      for (const q of sent) q.resolve();
    }
  }
  async function postCompletions(live: Completion[]): Promise<void> {
    try {
      const { results } = await call<{ results: CompletionAnswer[] }>("POST", "/v1/jobs/complete", { items: completionItems(live) });
      answerCompletions(live, results);
    } catch (e) {
      // A queue older than complete items' `logs` refuses the field: from then on the lines go first on their own.
      if (logsRide && refusesField(e, "logs")) {
        logsRide = false;
        for (const q of live) if (q.logs?.length) await write(q.r, "logs", { items: q.logs });
        return postCompletions(live);
      }
      for (const q of live) log({ event: "worker:write_failed", id: q.r.job.id, path: "complete", error: String(e) });
    }
  }
  function completionItems(live: Completion[]): { id: string; leaseToken: string; result?: object; logs?: unknown[] }[] {
    return live.map((q) => ({ id: q.r.job.id, leaseToken: q.r.job.leaseToken, ...(q.result ? { result: q.result } : {}), ...(logsRide && q.logs?.length ? { logs: q.logs } : {}) }));
  }
  function answerCompletions(live: Completion[], results: CompletionAnswer[]): void {
    results.forEach((a, i) => {
      if (a.ok) return;
      if (a.error?.code === "lease_lost" || a.error?.code === "already_terminal") lost(live[i]!.r);
      else log({ event: "worker:write_failed", id: a.id, path: "complete", error: a.error?.message });
    });
  }

  /** release: give a leased job back, pending and due, its attempt not counted (POST /v1/jobs/{id}/release). */
  async function release(job: LeasedJob): Promise<void> {
    try {
      await call("POST", `${jobPath(job.id)}/release`, { leaseToken: job.leaseToken });
      log({ event: "worker:released", id: job.id, reason: "shutdown" });
    } catch (e) {
      log({ event: "worker:release_failed", id: job.id, error: String(e) });
    }
  }

  function lost(r: Running): void {
    r.live = false;
    if (!r.abort.signal.aborted) r.abort.abort(new JobAbortedError("lease_lost"));
  }

  async function journal(r: Running, w: Omit<JournalWrite, "id">): Promise<JournalAnswer> {
    if (!r.live) return { ok: false, code: "lease_lost", message: "this attempt no longer holds the job" };
    try {
      await call("POST", `${jobPath(r.job.id)}/steps`, { leaseToken: r.job.leaseToken, op: w.op, seq: w.seq, name: w.name, startedAt: w.startedAt, start: w.start, ...(w.op === "commit" ? { result: JSON.parse(w.result ?? "null") } : {}) });
      return { ok: true };
    } catch (e) {
      if (!(e instanceof ApiError)) return { ok: false, code: "lease_lost", message: `the journal write failed: ${String(e)}` };
      const reason = (e.details as { reason?: string } | undefined)?.reason;
      if (reason === "nondeterminism") return { ok: false, code: "nondeterminism", message: e.message };
      if (reason === "journal_too_large" || e.code === "payload_too_large") return { ok: false, code: reason === "journal_too_large" ? "journal_too_large" : "payload_too_large", message: e.message };
      // Only the queue saying the attempt is over deposes it; anything else (a 5xx, a 429) fails this step, and the
      // attempt ends as a retry the worker still reports.
      if (e.code === "lease_lost" || e.code === "already_terminal" || e.code === "not_found") lost(r);
      return { ok: false, code: "lease_lost", message: e.message };
    }
  }

  async function settle(r: Running, out: JobOutcome): Promise<void> {
    switch (out.kind) {
      case "completed":
        return completeSoon(r, out.result ?? undefined, out.logs);
      case "retry":
        return write(r, "fail", { error: out.error.slice(0, 4000) || "error", ...(out.retryAfterMs !== undefined ? { retryAfterMs: out.retryAfterMs } : {}), ...(out.consumesAttempt === false ? { consumesAttempt: false } : {}) });
      case "failed":
        return write(r, "fail", { error: out.error.slice(0, 4000) || "error", fatal: true });
      case "snooze":
        return write(r, "fail", { error: "snoozed", retryAfterMs: out.delayMs, consumesAttempt: false });
      case "sleep":
        return write(r, "sleep", { seq: out.seq, name: out.name, until: out.until, startedAt: out.startedAt, start: out.start });
    }
  }

  function run(job: LeasedJob): Running {
    const r: Running = { job, abort: new AbortController(), live: true, done: Promise.resolve() };
    running.set(job.id, r);
    // Renew every third of the lease (renewEveryMs), by the worker itself, unless told not to.
    const renew = renewEvery === null ? undefined : setInterval(() => void write(r, "heartbeat", {}), renewEvery);
    r.done = (async () => {
      try {
        const out = await runOne(
          options.handlers as never,
          {
            id: job.id,
            type: job.type,
            payloadJson: JSON.stringify(job.payload),
            attempt: job.attempts,
            maxAttempts: job.maxAttempts,
            scope: job.scope,
            runAt: job.runAt,
            scheduledFor: job.scheduledFor,
            ...(eventOfTags(job.tags) ? { event: eventOfTags(job.tags)! } : {}),
            dispatchedAt: job.startedAt ?? Date.now(),
            ...(job.journal ? { journal: job.journal } : {}),
          },
          { signal: r.abort.signal, env: options.env, journal: { write: (w) => journal(r, w) }, heartbeat: () => write(r, "heartbeat", {}) },
        );
        if (renew !== undefined) clearInterval(renew);
        // A completion carries its lines; any other settle sends them first, under the lease it is about to end
        // (POST /v1/jobs/{id}/logs). A job that logs nothing sends nothing.
        if (out.logs && out.kind !== "completed") await write(r, "logs", { items: out.logs });
        if ((out.kind === "retry" || out.kind === "failed") && options.onError) {
          try {
            options.onError(out.error, job, out.kind);
          } catch (e) {
            log({ event: "worker:on_error_threw", id: job.id, error: String(e) });
          }
        }
        await settle(r, out);
      } catch (e) {
        log({ event: "worker:job_failed", id: job.id, error: String(e) });
      } finally {
        if (renew !== undefined) clearInterval(renew);
        // Only its own entry: a lost job's id may already be held by a newer lease of it.
        if (running.get(job.id) === r) running.delete(job.id);
        handedOff.delete(r);
        slotFreed?.();
      }
    })();
    return r;
  }

  async function loop(): Promise<void> {
    await preflight(call, options.types, root, log);
    let backoff = BACKOFF_MIN_MS;
    while (!stopping) {
      const free = concurrency - running.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        slotFreed = null;
        continue;
      }
      let jobs: LeasedJob[];
      try {
        jobs = await claim(free, waitMs);
        backoff = BACKOFF_MIN_MS;
      } catch (e) {
        if (stopping) break;
        const refusal = refusedForGood(e, root);
        if (refusal) {
          fatal = refusal;
          log({ event: "worker:stopped", error: refusal.message });
          break;
        }
        log({ event: "worker:claim_failed", error: String(e), retryInMs: backoff });
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
        continue;
      }
      if (stopping) {
        // A claim that carried completions is not aborted by stop(): what it leased meanwhile goes back unstarted.
        await Promise.all(jobs.map((job) => release(job)));
        break;
      }
      for (const job of jobs) run(job);
    }
    // Stopped with completions handed over but not yet carried by a claim: they go alone.
    const left = carried;
    carried = [];
    await sendCompletions(left);
  }

  const self: Worker = {
    start() {
      stopping = false;
      started ??= loop().finally(() => {
        started = null;
      });
      return started
        .then(() => Promise.all([...running.values()].map((r) => r.done)))
        .then(() => {
          if (fatal) throw fatal;
        });
    },
    async runOnce() {
      const jobs = await claim(concurrency, 0);
      await Promise.all(jobs.map((j) => run(j).done));
      return jobs.length;
    },
    async stop({ timeoutMs = 30_000 } = {}) {
      stopping = true;
      claimAbort?.abort();
      slotFreed?.();
      const all = () => Promise.all([...running.values(), ...handedOff].map((r) => r.done));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([all().then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs)))]);
      if (timer !== undefined) clearTimeout(timer);
      if (late) {
        // A claim carrying completions still on its way is cut off: its completions go again alone.
        carryAbort?.abort();
        // Past the deadline: tell the handlers, and give their jobs back unspent before anything else is written.
        await Promise.all(
          [...running.values()].map(async (r) => {
            // Silence the job first: the aborted handler's own outcome (a retry that would spend the attempt) must not race the release.
            const held = r.live;
            r.live = false;
            if (!r.abort.signal.aborted) r.abort.abort(new JobAbortedError("shutdown"));
            if (held) await release(r.job);
          }),
        );
      }
      await started?.catch(() => undefined);
    },
    installSignalHandlers({ timeoutMs } = {}) {
      const proc = (globalThis as { process?: { once(s: string, f: () => void): void; off(s: string, f: () => void): void } }).process;
      if (!proc) return () => {};
      const onSignal = () => void self.stop({ timeoutMs });
      proc.once("SIGTERM", onSignal);
      proc.once("SIGINT", onSignal);
      return () => {
        proc.off("SIGTERM", onSignal);
        proc.off("SIGINT", onSignal);
      };
    },
  };
  return self;
}
