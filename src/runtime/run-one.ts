/**
 * Running one job through its handler function and turning how it ended into
 * the tagged outcome that crosses the binding (error classes do not survive
 * RPC). Shared by `defineHandlers`, the pull worker, `runClaimed` and
 * `edgequeue/testing` (src/runtime/ is the SDK's job runtime they all run);
 * imports nothing of the Workers runtime.
 *
 * @module
 */
import { REDACTED } from "../sealing/redacted";
import type { DispatchJob, JobOutcome } from "../job/handler-contract";
import type { Handlers, JobContext, JobHandler } from "./context";
import { ChildJobFailedError, JobAbortedError, NondeterminismError, RetryableJobError, SnoozeJobError, TerminalJobError } from "./errors";
import { firstFrame } from "../job/error-group";
import { type JournalWriter, SleepRequest, StepRunner, WaitRequest } from "./steps";
import type { JournalStart, WaitItem } from "../job/handler-contract";
import { LOG_LINES_PER_JOB, logLine, type JobLogLine } from "../job/log-lines";
import { BATCH_GROUP, BATCH_KEY } from "./batch";
import { ProgressReporter } from "./progress";

export interface RunOneOptions<E> {
  signal: AbortSignal;
  env: E;
  journal: JournalWriter;
  /** ctx.heartbeat: renew the lease now (a pull worker's); default: the attempt's signal says whether it is still held. */
  heartbeat?: () => Promise<void>;
  /**
   * Where `ctx.log` lines go (default: a JSON line on the console); `kept` is false for a line logged while replaying
   * journaled steps, which is printed (marked `replay: true`) but not kept with the job again.
   */
  log?: (line: Record<string, unknown>, kept: boolean) => void;
  clock?: () => number;
  /** Where `ctx.progress` values go (JSON text), coalesced by runtime/progress.ts; absent: checked, then dropped. */
  progress?: (json: string) => Promise<void>;
  /** The coalescing interval of ctx.progress (default PROGRESS_INTERVAL_MS; the test kit sends each at once). */
  progressIntervalMs?: number;
  /** The delivery the job came in (a pushed call, a pull worker's claim): a batch handler runs its jobs together (batch.ts). */
  batchGroup?: unknown;
  /** The version of the code running it (code-version.ts), reported with the outcome. */
  version?: string;
}

export async function runOne<E>(handlers: Handlers<E>, job: DispatchJob, o: RunOneOptions<E>): Promise<JobOutcome> {
  const lines: JobLogLine[] = [];
  const clock = o.clock ?? Date.now;
  const progress = new ProgressReporter(o.progress ?? (async () => {}), clock, o.progressIntervalMs);
  const out = await runWithLines(handlers, job, o, lines, progress);
  // The last value reported goes before the outcome: a job seen completed is not seen short of its last progress.
  await progress.flush();
  const versioned = o.version !== undefined ? { ...out, version: o.version } : out;
  return lines.length > 0 ? { ...versioned, logs: lines } : versioned;
}

async function runWithLines<E>(handlers: Handlers<E>, job: DispatchJob, o: RunOneOptions<E>, lines: JobLogLine[], progress: ProgressReporter): Promise<JobOutcome> {
  const fn = (handlers as Record<string, JobHandler<string, E> | undefined>)[job.type];
  if (!fn) return { id: job.id, kind: "retry", error: `this handler Worker has no handler for job type ${job.type}` };
  const clock = o.clock ?? Date.now;
  const steps = new StepRunner({ id: job.id, attempt: job.attempt, dispatchedAt: job.dispatchedAt ?? clock() }, job.journal, o.journal, o.signal, clock);
  const log = o.log ?? ((line: Record<string, unknown>) => console.log(JSON.stringify(line)));
  // Kept with the job too (job/log-lines.ts): the newest lines ride with the outcome. Not a line logged while
  // replaying journaled steps: the attempt that journaled them logged it, and it is kept already (a retry or a
  // resume would keep it once per attempt) — Temporal's replay-aware logger, for the lines a job keeps.
  const keep = (message: string, fields: Record<string, unknown>, replay: boolean) => {
    const line = logLine(clock(), job.attempt, message, fields);
    if (!replay && lines.push(line) > LOG_LINES_PER_JOB) lines.shift();
    return line;
  };
  const ctx: JobContext<string, E> = {
    id: job.id,
    type: job.type,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    scope: job.scope,
    runAt: job.runAt,
    scheduledFor: job.scheduledFor ?? null,
    event: job.event ?? null,
    trace: job.trace ?? null,
    signal: o.signal,
    env: o.env,
    log: (message, fields = {}) => {
      const replay = steps.replaying;
      const kept = keep(message, fields, replay);
      // Still printed when replaying: the Worker's own logs tell each attempt's run.
      const base = { event: "job:log", id: job.id, type: job.type, attempt: job.attempt, ...(replay ? { replay: true } : {}) };
      // A sensitive type's lines are kept with the job (where readers see them redacted) but printed without their values.
      if (job.sensitive) return void log({ ...base, message: REDACTED, fields: REDACTED }, !replay);
      try {
        log({ ...base, message, ...fields }, !replay);
      } catch {
        // Fields JSON cannot carry (a BigInt, a cycle) must not fail the job: print the kept form instead.
        log({ ...base, message: kept.message, ...(kept.fields ?? {}) }, !replay);
      }
    },
    progress: (value) => progress.report(value),
    step: (name, f, options) => steps.step(name, f, options),
    sleep: (name, ms) => steps.sleep(name, ms),
    patched: (name) => steps.patched(name),
    waitForSignal: (name, options) => steps.waitForSignal(name, options),
    createWaitToken: (name, options) => steps.createWaitToken(name, options),
    waitForToken: (token) => steps.waitForToken(token),
    invoke: (name, request) => steps.invoke(name, request),
    waitForEvent: (topic, options) => steps.waitForEvent(topic, options),
    now: () => steps.now(),
    uuid: (label) => steps.uuid(label),
    heartbeat: async () => {
      if (o.signal.aborted) throw o.signal.reason;
      await o.heartbeat?.();
      if (o.signal.aborted) throw o.signal.reason;
    },
  };
  // Not enumerable: a handler that spreads or logs its context does not see it.
  if (o.batchGroup !== undefined) Object.defineProperty(ctx, BATCH_GROUP, { value: o.batchGroup });
  if (job.limitKey !== undefined) Object.defineProperty(ctx, BATCH_KEY, { value: job.limitKey });
  let value: unknown;
  try {
    value = await fn(JSON.parse(job.payloadJson), ctx as never);
  } catch (e) {
    // A failure of the handler's own fails the attempt even though it asked for waits — one thrown before any wait
    // reached it (a replayed child's failure out of Promise.all), or a child's failure thrown on after the waits
    // reached it (a catch that compensated with a step first): the parent's children it no longer awaits are
    // cancelled with it (docs/workflows.md "Child jobs").
    if (steps.waits.length > 0 && !steps.sleeping && !unwinds(e) && (!steps.delivered || childFailure(e))) return outcomeOf(job.id, e);
    // Waits first: a sleep asked for in the same moment is asked again when the job runs next (docs/workflows.md).
    if (steps.waits.length > 0) return waitOutcome(job.id, steps.waits, steps.startRecord());
    if (steps.sleeping) return sleepOutcome(job.id, steps.sleeping);
    // Asked to pause after a step (steps.ts PauseRequest), whatever the handler threw on its way out: the attempt
    // ends unspent and the queue pauses the job where it would have gone back to pending (scope/jobs/job-pause.ts).
    return steps.pausing ? { id: job.id, kind: "snooze", delayMs: 0 } : outcomeOf(job.id, e);
  }
  // A handler that caught the SleepRequest (or a WaitRequest) still sleeps (waits): the journal has its position.
  if (steps.waits.length > 0) return waitOutcome(job.id, steps.waits, steps.startRecord());
  if (steps.sleeping) return sleepOutcome(job.id, steps.sleeping);
  try {
    return { id: job.id, kind: "completed", result: toResult(value) };
  } catch (e) {
    // The work is done; only its result cannot be stored. Retrying would repeat the work, so this is final.
    return { id: job.id, kind: "failed", error: `the handler's result is not JSON-serializable: ${String(e)}` };
  }
}

/** unwinds: the error is (or wraps) a wait's or a sleep's request — the attempt ending on it, not failing. */
function unwinds(e: unknown): boolean {
  return inCauses(e, (c) => c instanceof WaitRequest || c instanceof SleepRequest, ["WaitRequest", "SleepRequest"]);
}

/** childFailure: the error is (or wraps) a child's failure — never a wait's unwinding. */
function childFailure(e: unknown): boolean {
  return inCauses(e, (c) => c instanceof ChildJobFailedError, ["ChildJobFailedError"]);
}

/** inCauses: the error or one of its causes (to CAUSE_DEPTH) is such an error — by class, or by name for a second copy of this SDK in a bundle. */
function inCauses(e: unknown, is: (c: unknown) => boolean, names: readonly string[]): boolean {
  for (let c = e, depth = 0; c !== null && c !== undefined && depth <= CAUSE_DEPTH; c = (c as { cause?: unknown }).cause, depth++) {
    const name = (c as { name?: unknown }).name;
    if (is(c) || (typeof name === "string" && names.includes(name))) return true;
  }
  return false;
}

function waitOutcome(id: string, waits: readonly WaitItem[], start: JournalStart): JobOutcome {
  return { id, kind: "wait", waits: [...waits], start };
}

function sleepOutcome(id: string, s: SleepRequest): JobOutcome {
  return { id, kind: "sleep", ...s.sleep };
}

/** outcomeOf maps a thrown value to an outcome, with its stack's first frame for its error group (job/error-group.ts). */
function outcomeOf(id: string, e: unknown): JobOutcome {
  const out = outcomeKind(id, e);
  if (out.kind !== "retry" && out.kind !== "failed") return out;
  const frame = firstFrame((e as { stack?: unknown })?.stack as string | undefined);
  return frame === null ? out : { ...out, frame };
}

/** outcomeKind: the outcome a thrown value says. Checked by name too: a second copy of this SDK in a bundle has its own classes. */
function outcomeKind(id: string, e: unknown): JobOutcome {
  const name = (e as { name?: unknown })?.name;
  const message = messageWithCauses(e);
  if (e instanceof NondeterminismError || name === "NondeterminismError") return { id, kind: "failed", error: `NondeterminismError: ${message}`, nondeterminism: true };
  if (e instanceof TerminalJobError || name === "TerminalJobError") return { id, kind: "failed", error: message };
  if (e instanceof SnoozeJobError || name === "SnoozeJobError") return { id, kind: "snooze", delayMs: wholeMs((e as SnoozeJobError).delayMs) ?? 0 };
  if (e instanceof RetryableJobError || name === "RetryableJobError") {
    const r = e as RetryableJobError;
    return { id, kind: "retry", error: message, retryAfterMs: wholeMs(r.retryAfterMs), consumesAttempt: r.consumesAttempt };
  }
  if (e instanceof JobAbortedError || name === "JobAbortedError") return { id, kind: "retry", error: message };
  return { id, kind: "retry", error: message };
}

/** How many `cause`s deep a job's error follows (`new TerminalJobError("…", { cause })`). */
const CAUSE_DEPTH = 3;

/**
 * messageWithCauses: the error's message, then each cause's — `charge failed; caused by TypeError: fetch
 * failed` — so what the handler wrapped is kept in the job's error (the queue clips it to 4,000 characters).
 */
function messageWithCauses(e: unknown): string {
  let text = e instanceof Error ? e.message : String(e);
  let cause = e instanceof Error ? e.cause : undefined;
  for (let depth = 0; cause !== undefined && cause !== null && depth < CAUSE_DEPTH; depth++) {
    const name = cause instanceof Error ? cause.name : typeof cause;
    text += `; caused by ${name}: ${cause instanceof Error ? cause.message : String(cause)}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text;
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
