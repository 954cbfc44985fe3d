/**
 * The scenarios on `edgequeue/testing` (backend.ts): `createFakeQueue` takes the enqueues (ids, dedupe keys and their
 * modes, delays) and `runJob` runs each job's attempts over its in-memory journal, children through the same handlers
 * (`childHandlers`). This file keeps the time — one clock for every job, each run due by its `dueAt` and moved to
 * the clock (`advanceTo`) before anything reaches it, what the queue's scope object and its alarm do — and copies
 * each run's state onto the fake's record of its job, as createInlineQueue does; the rules are the kit's.
 *
 * What the kit does not do, so neither does this: no leases, timeouts or guards (a job runs when it is due, alone,
 * whatever its type's or key's limits), and children run to their end at once, inside the parent's attempt.
 *
 * @module
 */
import { createFakeQueue, runJob, type AnyHandlers, type TestRun } from "edgequeue/testing";
import { QueueClientError } from "../../src/client/errors";
import type { Job } from "../../src/job/schemas";
import { Refused, type Backend, type Delivery, type EnqueueOptions, type JobState, type JobView, type StepView } from "./backend";

interface Tracked {
  job: Job;
  run: TestRun | null;
  /** Signals sent before the first attempt: runJob's `signals` (kept for the job's waits, as the queue keeps them). */
  early: { name: string; data: unknown }[];
}

const WAIT_KINDS: Record<string, string> = { signal: "signal", token_wait: "token", event: "event", invoke: "invoke" };

export function kitBackend(handlers: AnyHandlers, start: number): Backend {
  let clock = start;
  const queue = createFakeQueue({ now: () => clock });
  // A scope of its own, as on the queue: the handlers' per-job counters never see another scenario's job ids.
  const scope = { type: "Scenario", id: crypto.randomUUID() };
  const tracked = new Map<string, Tracked>();

  const tracking = (id: string): Tracked => {
    const t = tracked.get(id);
    if (!t) throw new Refused("not_found", `no job ${id}`);
    return t;
  };

  const waitingFor = (run: TestRun): JobView["waitingFor"] =>
    run.state !== "waiting" ? null : run.steps.filter((s) => s.kind in WAIT_KINDS && s.finishedAt === null).map((s) => ({ kind: WAIT_KINDS[s.kind]!, name: s.name, until: s.wakeAt }));

  /** sync: the fake's record of the job, from its run (the state as the queue's view names it: a sleep is pending). */
  const sync = (t: Tracked): void => {
    const run = t.run!;
    const state: JobState = run.state === "sleeping" ? "pending" : run.state;
    Object.assign(t.job, {
      state,
      attempts: run.attempts,
      result: run.result,
      lastError: run.error,
      failureKind: run.failureKind,
      runAt: run.dueAt ?? t.job.runAt,
      waitingFor: waitingFor(run),
      finishedAt: state === "completed" || state === "failed" ? clock : null,
      updatedAt: clock,
    });
  };

  const due = (t: Tracked): boolean => {
    if (!t.run) return t.job.state === "pending" && t.job.runAt <= clock;
    return t.run.dueAt !== null && t.run.dueAt <= clock;
  };

  const attempt = async (t: Tracked): Promise<void> => {
    if (!t.run) {
      const { job } = t;
      t.job.startedAt = clock;
      t.run = await runJob(handlers, job.payload, {
        type: job.type,
        id: job.id,
        maxAttempts: job.maxAttempts,
        backoff: job.backoff ?? undefined,
        scope: job.scope,
        now: clock,
        signals: t.early,
        childHandlers: handlers,
      });
    } else await t.run.advanceTo(clock).resume();
    sync(t);
  };

  const idle = async (): Promise<void> => {
    for (let n = 0; ; n++) {
      if (n > 1_000) throw new Error("kit backend: still running after 1,000 attempts");
      const next = [...tracked.values()].find(due);
      if (!next) return;
      await attempt(next);
    }
  };

  /** live: a tracked job's run (null before its first attempt), moved to the clock. */
  const live = (t: Tracked): TestRun | null => t.run?.advanceTo(clock) ?? null;

  /** refusedBy: the kit's thrown refusals as the queue's codes. */
  const refusedBy = (e: unknown): never => {
    const message = e instanceof Error ? e.message : String(e);
    if (/completed already/.test(message)) throw new Refused("conflict", message);
    if (/the job is (completed|failed)/.test(message)) throw new Refused("already_terminal", message);
    throw e;
  };

  /** deliver: a signal or token completion to a live run, its refusals as the queue's, the job's view followed. */
  const deliver = async (t: Tracked, send: () => Delivery["delivered"]): Promise<Delivery> => {
    let delivered: Delivery["delivered"];
    try {
      delivered = send();
    } catch (e) {
      return refusedBy(e);
    }
    sync(t);
    const answer = { delivered, waitingFor: t.job.waitingFor };
    await idle();
    return answer;
  };

  return {
    name: "kit",
    now: () => clock,

    async enqueue(type, payload, options: EnqueueOptions = {}, how = {}) {
      let out: { id: string; created: boolean };
      try {
        out = await queue.enqueue({ type, payload, scope, ...options } as never);
      } catch (e) {
        if (e instanceof QueueClientError) throw new Refused(e.code, e.message);
        throw e;
      }
      if (out.created) tracked.set(out.id, { job: queue.jobs.find((j) => j.id === out.id)! as Job, run: null, early: [] });
      if (how.idle !== false) await idle();
      return { id: out.id, created: out.created };
    },

    idle,

    async advance(ms) {
      clock += ms;
      await idle();
    },

    async job(id) {
      const { job } = tracking(id);
      return { id: job.id, type: job.type, state: job.state as JobState, payload: job.payload, attempts: job.attempts, result: job.result, lastError: job.lastError, failureKind: job.failureKind, runAt: job.runAt, dedupeKey: job.dedupeKey, dedupeMode: job.dedupeMode, waitingFor: job.waitingFor };
    },

    async steps(id): Promise<StepView[]> {
      return (tracking(id).run?.steps ?? []).map((s) => ({ name: s.name, kind: s.kind, attempt: s.attempt, result: s.result, wakeAt: s.wakeAt, finishedAt: s.finishedAt }));
    },

    async signal(id, name, data = null): Promise<Delivery> {
      const t = tracking(id);
      const run = live(t);
      if (run) return deliver(t, () => run.signal(name, data));
      t.early.push({ name, data });
      const answer = { delivered: "kept" as const, waitingFor: t.job.waitingFor };
      await idle();
      return answer;
    },

    async completeToken(id, name, data = null): Promise<Delivery> {
      const t = tracking(id);
      const run = live(t);
      if (!run || !run.steps.some((s) => s.kind === "token" && s.name === name)) throw new Refused("not_found", `job ${id} made no wait token ${JSON.stringify(name)}`);
      return deliver(t, () => run.completeToken(name, data));
    },

    async emit(topic, payload, eventId) {
      let ended = 0;
      for (const t of tracked.values()) {
        if (!t.run || t.job.finishedAt !== null) continue;
        ended += t.run.advanceTo(clock).emit(topic, payload, eventId);
        sync(t);
      }
      await idle();
      return ended;
    },
  };
}
