/**
 * Test doubles of the producer client (`QueueClient`, README "Enqueue from
 * another Worker"), for code under test that enqueues: plain vitest or Node,
 * no workerd, no queue.
 *
 * - `createFakeQueue()` records what was enqueued and answers as the queue
 *   would for what producers rely on: an `id` enqueued again is the same job
 *   (`created: false`), a live `dedupeKey` answers as the queue's key modes do
 *   (fake-keys.ts: active, pending, coalescing, debounce, throttle, cancelRunning, cancelPending),
 *   `delayMs`/`runAt` make a job scheduled. Nothing runs.
 * - `createInlineQueue(handlers)` runs each enqueued job in process through
 *   its handler — the real SDK: `ctx`, steps, the error classes' mapping —
 *   retrying as the queue would (no waiting: backoffs and sleeps pass at
 *   once), so `enqueue` resolves with the job in its final state.
 *
 * @module
 */
import type { Enqueued, EnqueueInput, ListQuery, QueueClient, TypedJob } from "../client/producer";
import { QueueClientError } from "../client/errors";
import type { JsonObject } from "../job/json-safe";
import type { Job, LeasedJob, ListResult, StatsResult } from "../job/schemas";
import type { Metrics } from "../metrics/schemas";
import { keyModeOf } from "../job/key-mode";
import { keyAnswer, scopeKey } from "./fake-keys";
import { runJob, type AnyHandlers, type TestRun } from "./run-job";

export interface FakeQueue extends QueueClient {
  /** Every job, in enqueue order. */
  readonly jobs: TypedJob[];
  /** Every signal sent, in order. */
  readonly signals: { id: string; name: string; data: unknown }[];
  /** Forget every job. */
  clear(): void;
}

type Input = EnqueueInput & { maxAttempts?: number };

class Store {
  readonly jobs: Job[] = [];
  private seq = 0;

  constructor(private readonly clock: () => number) {}

  /** enqueue: the job an input names — an existing one for a known id or a live key, else a new one. */
  enqueue(input: Input): { job: Job; created: boolean } {
    if (typeof input?.type !== "string" || input.type.length === 0) throw new QueueClientError("invalid_request", "type: must be a non-empty string", [{ path: "type", message: "must be a non-empty string" }]);
    if (input.payload === null || typeof input.payload !== "object" || Array.isArray(input.payload)) {
      throw new QueueClientError("invalid_request", "payload: must be a JSON object", [{ path: "payload", message: "must be a JSON object" }]);
    }
    if (input.id !== undefined) {
      const same = this.jobs.find((j) => j.id === `${scopeKey(input)}.${input.id}`);
      if (same) return { job: same, created: false };
    }
    const now = this.clock();
    if (input.dedupeKey !== undefined) {
      // The key's live job, under its mode (fake-keys.ts): a duplicate gets it, or its payload replaced.
      const live = keyAnswer(this.jobs, input as Input & { dedupeKey: string }, now);
      if (live) return { job: live, created: false };
    }
    const runAt = input.debounceMs !== undefined ? now + input.debounceMs : (input.runAt ?? now + (input.delayMs ?? 0));
    const job: Job = {
      id: `${scopeKey(input)}.${input.id ?? `fake-${++this.seq}`}`,
      type: input.type,
      payload: JSON.parse(JSON.stringify(input.payload)) as JsonObject,
      scope: input.scope ?? null,
      state: "pending",
      failureKind: null,
      codeVersion: null,
      priority: input.priority ?? 0,
      runAt,
      attempts: 0,
      maxAttempts: input.maxAttempts ?? 3,
      timeoutMs: input.timeoutMs ?? null,
      dedupeKey: input.dedupeKey ?? null,
      tags: input.tags ?? [],
      lastError: null,
      result: null,
      cancelReason: null,
      dedupeMode: input.dedupeKey === undefined ? null : keyModeOf(input),
      scheduledFor: null,
      backoff: input.backoff ? { kind: input.backoff.kind ?? "exponential", baseMs: input.backoff.baseMs, maxMs: input.backoff.maxMs ?? Math.max(input.backoff.baseMs, 300_000) } : null,
      createdAt: now,
      updatedAt: now,
      startedAt: null,
      finishedAt: null,
      waitingFor: null,
      parentId: null,
      concurrencyKey: null,
      expiresAt: input.expiresAt ?? (input.expiresInMs === undefined ? null : now + input.expiresInMs),
      progress: null,
      progressAt: null,
      callback: null,
      trace: null,
      rerunOf: null,
      reruns: [],
    };
    this.jobs.push(job);
    return { job, created: true };
  }

  /** get: by id, or by the id a caller gave at enqueue with its type or scope (as the queue's getJob). */
  get(id: string, where: { type?: string; scopeType?: string; scopeId?: string } = {}): Job {
    const job = this.jobs.find((j) => j.id === id) ?? this.jobs.find((j) => j.id.endsWith(`.${id}`) && (where.type === undefined || j.type === where.type) && (where.scopeType === undefined || (j.scope?.type === where.scopeType && j.scope.id === where.scopeId)) && (where.type !== undefined || where.scopeType !== undefined));
    if (!job) throw new QueueClientError("not_found", `no job ${id}`);
    return job;
  }

  /** Signals sent (`signal`), in order: what code under test told its jobs. */
  readonly signals: { id: string; name: string; data: unknown }[] = [];

  client(onEnqueue: (job: Job) => Promise<void>, onSignal: (job: Job, name: string, data: unknown) => Promise<"resumed" | "kept"> = async () => "kept"): QueueClient {
    const now = this.clock;
    return {
      signal: async (to: string | { type: string; dedupeKey: string; scope?: { type: string; id: string } }, name: string, data: unknown = null) => {
        const job =
          typeof to === "string"
            ? this.get(to)
            : this.jobs.find((j) => j.type === to.type && j.dedupeKey === to.dedupeKey && scopeKey(j) === scopeKey(to) && ["pending", "running", "waiting"].includes(j.state));
        if (!job) throw new QueueClientError("not_found", `no live job of type ${(to as { type: string }).type} holds that dedupe key`);
        if (job.finishedAt !== null) throw new QueueClientError("already_terminal", `job ${job.id} is already ${job.state}`);
        this.signals.push({ id: job.id, name, data });
        const delivered = await onSignal(job, name, data);
        // As the queue answers: what the job waits for now (null: nothing), so a kept signal a test sends by a wrong name shows.
        return { id: job.id, delivered, waitingFor: job.waitingFor };
      },
      enqueue: async (input) => {
        const out = this.enqueue(input as Input);
        if (out.created) await onEnqueue(out.job);
        return { ...out, id: out.job.id } as unknown as Enqueued<never>;
      },
      enqueueMany: async (inputs: EnqueueInput[], options: { return?: "ids" | "jobs" } = {}) => {
        const outs = inputs.map((i) => this.enqueue(i as Input));
        for (const o of outs) if (o.created) await onEnqueue(o.job);
        // As the queue answers: ids and `created`, the views only when asked for.
        return outs.map((o) => (options.return === "jobs" ? { ...o, id: o.job.id } : { id: o.job.id, created: o.created })) as never;
      },
      get: async (id, where) => this.get(id, where) as TypedJob,
      cancel: async (id, reason) => {
        const job = this.get(id);
        if (job.state !== "pending" && job.state !== "running" && job.state !== "waiting") throw new QueueClientError("already_terminal", `job ${id} is already ${job.state}`);
        Object.assign(job, { state: "cancelled", cancelReason: reason ?? null, finishedAt: now(), updatedAt: now() });
        return job as TypedJob;
      },
      list: async (q: ListQuery = {}): Promise<ListResult> => ({
        items: this.jobs
          .filter((j) => anyOf(q.type, j.type) && anyOf(q.state, j.state) && anyOf(q.failureKind, j.failureKind) && (q.tag === undefined || j.tags.includes(q.tag)))
          .filter((j) => q.dedupeKey === undefined || j.dedupeKey === q.dedupeKey)
          .filter((j) => q.scopeType === undefined || (j.scope?.type === q.scopeType && (q.scopeId === undefined || j.scope.id === q.scopeId)))
          .slice(0, q.limit ?? 50),
        nextCursor: null,
      }),
      stats: async (type) => this.stats(type),
      metrics: async (): Promise<Metrics> => ({ at: now(), types: [], minutes: [], objects: [], objectMinutes: [] }),
      claimOrEnqueue: async (input) => {
        const { job } = this.enqueue({ ...(input as Input), dedupeMode: "pending" });
        return this.leaseKey(job.dedupeKey!, job.type);
      },
      runClaimed: async (handle, fn, o = {}) => {
        const max = o.maxDrains ?? 10;
        let first: JsonObject | undefined;
        let current: LeasedJob | null = handle;
        for (let drained = 0; current; drained++) {
          const job = this.get(current.id);
          const leased: LeasedJob = current;
          // fn runs with a handler's context, as the queue's runClaimed gives it (the test kit's runJob, one attempt).
          let thrown: { error: unknown } | null = null;
          const run = await runJob(
            async (_payload, ctx) => {
              try {
                return await fn(leased, ctx);
              } catch (e) {
                thrown = { error: e };
                throw e;
              }
            },
            leased.payload as JsonObject,
            { type: leased.type, id: leased.id, maxAttempts: 1, scope: leased.scope, env: o.env },
          );
          if (run.state === "completed") {
            const result = run.result ?? undefined;
            Object.assign(job, { state: "completed", result: result ?? null, finishedAt: now(), updatedAt: now() });
            if (drained === 0) first = result;
          } else if (run.state === "failed") {
            Object.assign(job, { state: "failed", failureKind: run.failureKind === "nondeterminism" ? "nondeterminism" : "fatal", lastError: run.error, finishedAt: now(), updatedAt: now() });
            const follower = drained < max ? this.leaseKey(job.dedupeKey!, job.type) : null;
            if (follower) await this.client(onEnqueue).runClaimed(follower, fn, { ...o, maxDrains: max - drained - 1 }).catch(() => undefined);
            throw thrown === null ? new Error(run.error ?? "failed") : (thrown as { error: unknown }).error;
          } else {
            // A sleep or a wait ends the attempt: the key stays held, no follower runs.
            Object.assign(job, { state: run.state === "waiting" ? "waiting" : "pending", updatedAt: now() });
            return first;
          }
          current = drained < max ? this.leaseKey(job.dedupeKey!, job.type) : null;
        }
        return first;
      },
      retryFailed: async (f = {}) => {
        let retried = 0;
        for (const j of this.jobs) {
          if (j.state !== "failed" || (f.type !== undefined && j.type !== f.type)) continue;
          Object.assign(j, { state: "pending", failureKind: null, attempts: 0, runAt: now(), finishedAt: null, updatedAt: now() });
          retried++;
          await onEnqueue(j);
        }
        return { retried, skipped: 0, nextCursor: null };
      },
    };
  }

  /** leaseKey: the key's pending job, marked running and handed out, when none of the key runs or waits. */
  private leaseKey(key: string, type: string): LeasedJob | null {
    const live = this.jobs.filter((j) => j.dedupeKey === key && j.type === type && (j.state === "pending" || j.state === "running" || j.state === "waiting"));
    const pending = live.find((j) => j.state === "pending");
    if (live.some((j) => j.state === "running" || j.state === "waiting") || !pending) return null;
    const now = this.clock();
    // Not started by its expiry: it ends expired and never runs, as in the queue (docs/guards.md "Expiry before start").
    if (pending.expiresAt !== null && pending.startedAt === null && now >= pending.expiresAt) {
      Object.assign(pending, { state: "expired", finishedAt: now, updatedAt: now });
      return null;
    }
    Object.assign(pending, { state: "running", attempts: pending.attempts + 1, startedAt: now, updatedAt: now });
    return { ...pending, leaseToken: `fake-${pending.id}`, leaseExpiresAt: now + 30_000 };
  }

  private stats(type: string | undefined): StatsResult {
    const now = this.clock();
    const of = this.jobs.filter((j) => type === undefined || j.type === type);
    const count = (p: (j: Job) => boolean) => of.filter(p).length;
    const failed = (k: string) => count((j) => j.state === "failed" && j.failureKind === k);
    const due = of.filter((j) => j.state === "pending" && j.runAt <= now);
    return {
      pending: due.length,
      scheduled: count((j) => j.state === "pending" && j.runAt > now),
      running: count((j) => j.state === "running"),
      completed: count((j) => j.state === "completed"),
      failed: count((j) => j.state === "failed"),
      cancelled: count((j) => j.state === "cancelled"),
      superseded: count((j) => j.state === "superseded"),
      expired: count((j) => j.state === "expired"),
      waiting: count((j) => j.state === "waiting"),
      oldestPendingLagMs: due.length === 0 ? 0 : now - Math.min(...due.map((j) => j.runAt)),
      failedByKind: { retries_exhausted: failed("retries_exhausted"), fatal: failed("fatal"), stalled: failed("stalled"), timeout: failed("timeout"), nondeterminism: failed("nondeterminism") },
      unhandledTypes: [],
    };
  }
}

/** createFakeQueue: a QueueClient that records jobs and runs nothing. */
export function createFakeQueue(options: { now?: () => number } = {}): FakeQueue {
  const store = new Store(options.now ?? Date.now);
  const client = store.client(async () => {});
  return Object.assign(client, { jobs: store.jobs as TypedJob[], signals: store.signals, clear: () => void store.jobs.splice(0) });
}

/** createInlineQueue: a QueueClient whose enqueue runs the job through `handlers` in process, retries and all, before it answers. */
export function createInlineQueue(handlers: AnyHandlers, options: { env?: unknown; now?: () => number } = {}): FakeQueue {
  const clock = options.now ?? Date.now;
  const store = new Store(clock);
  // A job whose handler waits (ctx.waitForSignal, or a child with no handler here) is kept until a signal resumes it.
  const waiting = new Map<string, TestRun>();
  const finish = async (job: Job, run: TestRun) => {
    await run.settle(job.maxAttempts * 10);
    if (run.state === "waiting") waiting.set(job.id, run);
    else waiting.delete(job.id);
    Object.assign(job, {
      state: run.state === "completed" ? "completed" : run.state === "failed" ? "failed" : run.state === "waiting" ? "waiting" : "pending",
      waitingFor: run.state === "waiting" ? waitsOf(run) : null,
      attempts: run.attempts,
      result: run.result,
      lastError: run.error,
      failureKind: run.failureKind,
      startedAt: job.startedAt ?? clock(),
      finishedAt: run.state === "completed" || run.state === "failed" ? clock() : null,
      updatedAt: clock(),
    });
  };
  const client = store.client(
    async (job) => {
      if (!Object.hasOwn(handlers, job.type)) return; // no handler here: it stays pending, as a pulled type would
      // ctx.invoke's children run through the same handlers, in process, before their parent goes on.
      await finish(job, await runJob(handlers, job.payload, { type: job.type, id: job.id, maxAttempts: job.maxAttempts, backoff: job.backoff ?? undefined, scope: job.scope, env: options.env, now: clock(), childHandlers: handlers }));
    },
    async (job, name, data) => {
      const run = waiting.get(job.id);
      if (!run) return "kept";
      const delivered = run.signal(name, data);
      if (delivered === "resumed") await finish(job, run);
      return delivered;
    },
  );
  return Object.assign(client, { jobs: store.jobs as TypedJob[], signals: store.signals, clear: () => void store.jobs.splice(0) });
}

/** What a waiting run waits for, as a job's view says it (`waitingFor`): its open waits, in journal order. */
const WAIT_VIEW_KIND = { signal: "signal", token_wait: "token", event: "event", invoke: "invoke" } as const;
function waitsOf(run: TestRun): NonNullable<Job["waitingFor"]> {
  return run.steps.flatMap((s) => {
    const kind = WAIT_VIEW_KIND[s.kind as keyof typeof WAIT_VIEW_KIND];
    if (kind === undefined || s.finishedAt !== null) return [];
    const child = kind === "invoke" ? run.children.find((c) => c.step === s.name && c.state === "waiting")?.id : undefined;
    return [{ kind, name: s.name, until: s.wakeAt, ...(child === undefined ? {} : { child }) }];
  });
}

/** anyOf: a list filter as the API reads it — absent (any), one value, several, or comma-separated text. */
function anyOf(want: string | readonly string[] | undefined, value: string | null): boolean {
  if (want === undefined) return true;
  const list = typeof want === "string" ? want.split(",").map((s) => s.trim()) : want;
  return value !== null && list.includes(value);
}
