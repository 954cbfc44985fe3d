/**
 * What an attempt run under a pull lease writes — a durable step, a wait token, a sleep, its waits, a retry or a
 * failure — as the API's bodies (docs/http-api.md), and what the handler hears of a refused journal write, whatever
 * carries them: the pull worker's HTTP calls (pull-worker/attempt.ts) or a client's operations (runClaimed:
 * client/run-claimed.ts). Each body goes to `POST /v1/jobs/{id}/<path>` with the attempt's lease token.
 *
 * @module
 */
import { eventOfTags } from "../job/event-tags";
import { attemptTrace } from "../job/trace";
import type { DispatchJob, JobOutcome, JournalAnswer, JournalWrite } from "../job/handler-contract";
import type { LeasedJob } from "../job/schemas";

export interface LeaseWrite {
  path: "steps" | "sleep" | "wait" | "fail" | "logs";
  body: Record<string, unknown>;
}

/** A refusal as either transport throws it: the pull worker's ApiError, the clients' QueueClientError. */
interface Refusal {
  code: string;
  message: string;
  details?: unknown;
}

const isRefusal = (e: unknown): e is Refusal => typeof e === "object" && e !== null && typeof (e as Refusal).code === "string" && typeof (e as Refusal).message === "string";

/** stepWrite: a journal write of the handler's (steps.ts) as `POST /v1/jobs/{id}/steps` takes it. */
export function stepWrite(w: Omit<JournalWrite, "id">): LeaseWrite {
  const extra = w.op === "commit" ? { result: JSON.parse(w.result ?? "null"), ...(w.sensitive ? { sensitive: true } : {}) } : w.op === "token" ? { timeoutMs: (JSON.parse(w.result ?? "{}") as { timeoutMs?: number | null }).timeoutMs ?? null } : {};
  return { path: "steps", body: { op: w.op, seq: w.seq, name: w.name, startedAt: w.startedAt, start: w.start, ...extra } };
}

/** stepAnswer: the journal's answer to an accepted write — a wait token comes back made by the queue (docs/workflows.md). */
export function stepAnswer(w: Omit<JournalWrite, "id">, out: { token?: unknown; paused?: unknown } | null | undefined): JournalAnswer {
  // Asked to pause: the attempt ends after this step (steps.ts).
  const paused = out?.paused === true ? { paused: true as const } : {};
  return w.op === "token" && out?.token !== undefined ? { ok: true, result: JSON.stringify(out.token), ...paused } : { ok: true, ...paused };
}

/**
 * journalRefusal: what the handler hears of a refused journal write, and whether the attempt is deposed (the queue
 * said it no longer holds the job). Anything else — a 5xx, a 429, a network failure — fails this step only, and the
 * attempt ends as a retry its runner still reports.
 */
export function journalRefusal(e: unknown): { answer: JournalAnswer; deposed: boolean } {
  if (!isRefusal(e)) return { answer: { ok: false, code: "lease_lost", message: `the journal write failed: ${String(e)}` }, deposed: false };
  const reason = (e.details as { reason?: string } | undefined)?.reason;
  if (reason === "nondeterminism") return { answer: { ok: false, code: "nondeterminism", message: e.message }, deposed: false };
  if (reason === "refused") return { answer: { ok: false, code: "refused", message: e.message }, deposed: false };
  if (reason === "journal_too_large" || e.code === "payload_too_large") {
    return { answer: { ok: false, code: reason === "journal_too_large" ? "journal_too_large" : "payload_too_large", message: e.message }, deposed: false };
  }
  return { answer: { ok: false, code: "lease_lost", message: e.message }, deposed: isOver(e) || e.code === "not_found" };
}

/** isOver: the queue says this attempt is over — its lease lost, or the job ended. */
export function isOver(e: unknown): boolean {
  return isRefusal(e) && (e.code === "lease_lost" || e.code === "already_terminal");
}

/** settleWrite: the write that ends an attempt that did not complete (a completion goes its own way). */
export function settleWrite(out: Exclude<JobOutcome, { kind: "completed" }>): LeaseWrite {
  const w = settleBody(out);
  // The code version that ran the attempt rides on whichever write ends it (docs/deploy.md "Code that changes under running jobs").
  return out.version ? { ...w, body: { ...w.body, version: out.version } } : w;
}

function settleBody(out: Exclude<JobOutcome, { kind: "completed" }>): LeaseWrite {
  switch (out.kind) {
    case "retry":
      return {
        path: "fail",
        body: {
          error: out.error.slice(0, 4000) || "error",
          ...(out.retryAfterMs !== undefined ? { retryAfterMs: out.retryAfterMs } : {}),
          ...(out.consumesAttempt === false ? { consumesAttempt: false } : {}),
          ...(out.frame ? { frame: out.frame } : {}),
        },
      };
    case "failed":
      return { path: "fail", body: { error: out.error.slice(0, 4000) || "error", fatal: true, ...(out.frame ? { frame: out.frame } : {}), ...(out.nondeterminism ? { nondeterminism: true } : {}) } };
    case "snooze":
      // `snooze`: no error kept or counted; a queue older than it takes the rest, a retry that does not count.
      return { path: "fail", body: { error: "snoozed", retryAfterMs: out.delayMs, consumesAttempt: false, snooze: true } };
    case "sleep": {
      // The queue reckons the wake time from the duration, on its clock (docs/handlers.md "Durable steps"); a replay
      // has none (the journal holds its wake time).
      const body = { seq: out.seq, name: out.name, until: out.until, startedAt: out.startedAt, start: out.start };
      return { path: "sleep", body: out.durationMs === undefined || out.durationMs === null ? body : { ...body, durationMs: out.durationMs } };
    }
    case "wait":
      return { path: "wait", body: { waits: out.waits, start: out.start } };
  }
}

/** dispatchOf: a leased job as a handler runs it (runtime/run-one.ts), with its journal. */
export function dispatchOf(job: LeasedJob): DispatchJob {
  return {
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
    ...(job.concurrencyKey !== null && job.concurrencyKey !== undefined ? { limitKey: job.concurrencyKey } : {}),
    // The handler's spans continue its attempt's, as a pushed handler's do (job/trace.ts).
    ...(job.trace ? { trace: attemptTrace(job.id, job.attempts, job.trace) } : {}),
    ...(job.sensitive ? { sensitive: true as const } : {}),
  };
}
