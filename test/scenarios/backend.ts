/**
 * What a scenario (test/scenarios/*.case.ts) drives: a queue it enqueues into, sends signals, token completions and
 * events to, and moves the clock of. Two implementations: the real queue in the Workers pool (queue-backend.ts: a real
 * scope object on a ManualClock, the real handler Worker over its service binding, alarms fired by hand) and
 * `edgequeue/testing` (kit-backend.ts: createFakeQueue for enqueues and keys, runJob for each job's attempts).
 *
 * Every action returns once nothing more happens by itself: whatever came due ran and ended (completed, failed,
 * waiting, or pending until a later time). Times are the backend's clock; a scenario reads them relative to `now()`.
 *
 * @module
 */

export type JobState = "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "superseded" | "expired";

export interface EnqueueOptions {
  dedupeKey?: string;
  dedupeMode?: "active" | "pending";
  coalesce?: "latest";
  debounceMs?: number;
  throttleMs?: number;
  delayMs?: number;
  maxAttempts?: number;
  backoff?: { kind?: "exponential" | "fixed"; baseMs: number; maxMs?: number };
  timeoutMs?: number;
}

/** A job as the queue's view has it (GET /v1/jobs/{id}), the fields the scenarios read. */
export interface JobView {
  id: string;
  type: string;
  state: JobState;
  payload: Record<string, unknown>;
  attempts: number;
  result: unknown;
  lastError: string | null;
  failureKind: string | null;
  /** A pending job's run time. */
  runAt: number;
  dedupeKey: string | null;
  dedupeMode: string | null;
  waitingFor: { kind: string; name: string; until: number | null }[] | null;
}

/** A journal entry (GET /v1/jobs/{id}/steps). */
export interface StepView {
  name: string;
  kind: string;
  attempt: number;
  result: unknown;
  wakeAt: number | null;
  finishedAt: number | null;
}

/** What a signal or a token's completion answers. */
export interface Delivery {
  delivered: "resumed" | "kept";
  waitingFor: JobView["waitingFor"];
}

/** A refusal, by the queue's error code (409 `already_terminal`, `conflict`, …), from either backend. */
export class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export interface Backend {
  readonly name: "queue" | "kit";
  /** The clock every time here is on (epoch ms). */
  now(): number;
  /** Enqueues into the scenario's own scope; throws Refused. `idle: false`: returns at once, the job possibly running. */
  enqueue(type: string, payload: Record<string, unknown>, options?: EnqueueOptions, how?: { idle?: boolean }): Promise<{ id: string; created: boolean }>;
  /** Returns once nothing runs and nothing is due. */
  idle(): Promise<void>;
  /** Moves the clock `ms` on; what came due by then runs (at that time, as after an alarm), then idle. */
  advance(ms: number): Promise<void>;
  job(id: string): Promise<JobView>;
  steps(id: string): Promise<StepView[]>;
  /** A signal to the job (POST /v1/jobs/{id}/signals/{name}); throws Refused. */
  signal(id: string, name: string, data?: unknown): Promise<Delivery>;
  /** Completes the wait token the job made under `name` (POST to its path, no queue token); throws Refused. */
  completeToken(id: string, name: string, data?: unknown): Promise<Delivery>;
  /** Emits an event (POST /v1/topics/{topic}/events); answers how many waits it ended. */
  emit(topic: string, payload: Record<string, unknown>, eventId: string): Promise<number>;
}

/** A scenario, written once. `skipOn`: a backend it cannot run on, and why (shown in the test's name). */
export interface Scenario {
  name: string;
  skipOn?: { kit?: string; queue?: string };
  run(b: Backend): Promise<void>;
}

/** Where both backends' clocks start: far from the real clock, so no alarm of the queue's objects fires on its own. */
export const T0 = Date.UTC(2030, 0, 1);

export const TERMINAL: readonly JobState[] = ["completed", "failed", "cancelled", "superseded", "expired"];

/**
 * settle: moves the clock to each time the job is due next (a retry's backoff, a sleep, a wait's timeout) until it
 * ends; throws if it waits with no timeout (send what it waits for first).
 */
export async function settle(b: Backend, id: string, limit = 20): Promise<JobView> {
  for (let i = 0; i < limit; i++) {
    const job = await b.job(id);
    if (TERMINAL.includes(job.state)) return job;
    const due = job.state === "pending" ? job.runAt : job.state === "waiting" ? Math.min(...(job.waitingFor ?? []).map((w) => w.until ?? Infinity)) : Infinity;
    if (due === Infinity) throw new Error(`settle: job ${id} is ${job.state} with nothing due (${JSON.stringify(job.waitingFor)})`);
    await b.advance(Math.max(0, due - b.now()));
  }
  throw new Error(`settle: job ${id} did not end in ${limit} moves of the clock`);
}

/** A fresh name per scenario run: events and keys of one run never meet another's. */
export function unique(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}
