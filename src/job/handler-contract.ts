/**
 * The contract between a scope object and a handler Worker, as it crosses the
 * service binding (DESIGN.md §4). Plain data only: error classes do not
 * survive RPC, so a handler's verdict is a tagged outcome per job.
 *
 * @module
 */
import type { JsonObject } from "./json-safe";
import type { JobLogLine } from "./log-lines";
import type { Scope } from "./schemas";
import type { TraceContext } from "./trace";

/** One job as it crosses the binding; the handler SDK turns it into `(payload, ctx)`. */
export interface DispatchJob {
  id: string;
  type: string;
  /** The payload as JSON text: parsed on the handler's side, not in the scope object (whose CPU is the queue's ceiling). */
  payloadJson: string;
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
  scope: Scope | null;
  runAt: number;
  /** The schedule slot the job was fired for (epoch ms), or null. */
  scheduledFor: number | null;
  /** When this attempt was dispatched, by the queue's clock: a journaled sleep due by then is over. */
  dispatchedAt?: number;
  /** The job's journal of durable steps, when it has one (scope/workflow/steps.ts); absent for a job that never journaled. */
  journal?: Journal;
  /** A topic's delivery job: the event it carries (job/event-tags.ts); absent otherwise. */
  event?: { id: string; topic: string };
  /** The value its type's key counts it under (a keyed limit's, a batch's: runtime/batch.ts groups by it); absent when none. */
  limitKey?: string;
  /** The W3C trace context the handler's spans continue — its attempt's span as parent (job/trace.ts); absent when the job has none. */
  trace?: TraceContext;
  /** Its type is marked `sensitive`: the handler's own log lines print its values `[redacted]` (docs/operating.md "Sensitive values"). */
  sensitive?: true;
}

/** The start record: the first attempt's start and a seed, from which `ctx.now()` and `ctx.uuid()` derive. */
export interface JournalStart {
  at: number;
  seed: string;
}

/**
 * What a journal position holds: a step, a sleep, a wait for a signal, a wait token made (its result is the token),
 * or a wait for a token's completion (docs/workflows.md).
 */
export const JOURNAL_KINDS = ["step", "sleep", "signal", "token", "token_wait", "invoke", "event", "patch"] as const;
export type JournalKind = (typeof JOURNAL_KINDS)[number];

/** One journaled step, sleep or wait, at its position in the job's step calls. */
export interface JournalEntry {
  seq: number;
  name: string;
  kind: JournalKind;
  /**
   * JSON text; null while an atMostOnce step has started and not finished, or while a wait is open. An ended wait
   * holds `{"data": …}`, or `null` when its timeout passed.
   */
  result: string | null;
  startedAt: number;
  finishedAt: number | null;
  attempt: number;
  /** sleep: when it ends; a wait: its timeout, or null for none. */
  wakeAt: number | null;
}

export interface Journal {
  start: JournalStart | null;
  entries: JournalEntry[];
}

/**
 * A journal write from a running attempt: `begin` before an atMostOnce step
 * runs, `commit` with a step's result, `token` to make a wait token (the queue
 * signs it and answers it as `result`). Each carries the start record, which
 * the first write of the job persists.
 */
export interface JournalWrite {
  id: string;
  /** patch: ctx.patched's marker, where a job first reached that point on code with the patch (docs/deploy.md). */
  op: "begin" | "commit" | "token" | "patch";
  seq: number;
  name: string;
  /** JSON text (commit); token: `{"timeoutMs": n | null}`. */
  result: string | null;
  startedAt: number;
  start: JournalStart;
  /** commit: the step was run with `{ sensitive: true }` — its value is shown `"[redacted]"` (docs/operating.md "Sensitive values"). */
  sensitive?: boolean;
}

export type JournalAnswer =
  | {
      ok: true;
      /** token: the wait token, JSON text. */
      result?: string;
      /** The job was asked to pause (POST /v1/jobs/{id}/pause): after this step the attempt ends, unspent, and the job waits paused. */
      paused?: true;
    }
  | { ok: false; code: "lease_lost" | "payload_too_large" | "journal_too_large" | "nondeterminism" | "not_found" | "refused"; message: string };

/**
 * A wait token (ctx.createWaitToken): `POST` `{"data": …}` to `path` (or `url`) with no queue token to complete it,
 * once. The same token on every attempt of the job.
 */
export interface WaitToken {
  /** The token itself (the last part of `path`). */
  id: string;
  /** The name it was made with. */
  name: string;
  /** `/v1/tokens/<id>` on the queue's Worker. */
  path: string;
  /** `path` on the queue's `publicUrl`, or null when none is configured. */
  url: string | null;
  /** When it expires (epoch ms, the queue's clock), or null for never. */
  expiresAt: number | null;
}

/**
 * One wait an attempt ends on (ctx.waitForSignal, ctx.waitForToken). `held`: the journal has it already, open (the
 * queue keeps its timeout). A new one gives `timeoutMs`, reckoned on the queue's clock from when it hears of it, or
 * `until` (a token's expiry, already on the queue's clock); neither: no timeout.
 */
export interface WaitItem {
  seq: number;
  /** invoke: a child job (ctx.invoke), ended by the child's end; event: ctx.waitForEvent (name: the topic). */
  kind: "signal" | "token_wait" | "invoke" | "event";
  name: string;
  timeoutMs?: number | null;
  until?: number | null;
  held?: boolean;
  startedAt: number;
  /** A new invoke: the child's enqueue, as `POST /v1/jobs` takes it without an `id` (its id is derived). */
  request?: unknown;
  /** A new event wait: the payload fields the event must have, with these values. */
  match?: Record<string, unknown>;
}

export interface DispatchBatch {
  type: string;
  jobs: DispatchJob[];
}

/**
 * The verdict on one job. An uncaught throw in the handler is a `retry`. `logs`: the attempt's `ctx.log`
 * lines, stored with the job when the outcome settles (scope/jobs/job-logs.ts).
 */
export type HandlerOutcome = (
  | { kind: "completed"; result?: JsonObject | null }
  /** `frame`: the first frame of the error's stack (job/error-group.ts firstFrame), for its error group. */
  | { kind: "retry"; error: string; retryAfterMs?: number; consumesAttempt?: boolean; frame?: string }
  /** `nondeterminism`: the replay no longer matched the journal (NondeterminismError): failure kind `nondeterminism`. */
  | { kind: "failed"; error: string; frame?: string; nondeterminism?: boolean }
  | { kind: "snooze"; delayMs: number }
  /**
   * ctx.sleep: journal the sleep at `seq` and put the job back to pending, unspent, for `durationMs` from when the
   * queue hears of it (its own clock); without one (a replay, or an SDK older than it), until `until`.
   */
  | { kind: "sleep"; name: string; seq: number; until: number; durationMs?: number | null; startedAt: number; start: JournalStart }
  /**
   * ctx.waitFor…: journal the waits (at their positions) and put the job in `waiting` until one of them ends, unspent
   * — or back to pending at once when one has ended already (a signal that raced ahead). docs/workflows.md.
   */
  | { kind: "wait"; waits: WaitItem[]; start: JournalStart }
) & {
  logs?: JobLogLine[];
  /**
   * The version of the code that ran the attempt: the handler Worker's version metadata, else its configured
   * `version` (docs/deploy.md "Code that changes under running jobs"); kept with the attempt's end in the timeline.
   */
  version?: string;
};

export type JobOutcome = HandlerOutcome & { id: string };

/** Why a running job's signal aborts. */
export type AbortReason = "cancelled" | "timeout" | "lease_lost";

export interface AbortNotice {
  id: string;
  reason: AbortReason;
}

/**
 * BatchControl is an RPC stub the scope object passes with each batch.
 *
 * - `next()`: the handler SDK keeps one call pending; it resolves with the next
 *   job to abort, or null when the batch is over. One long-poll per batch, no
 *   polling loop, and no new Worker invocation per notice.
 * - `journal(writes)`: durable steps' starts or results, written in the jobs'
 *
 *   own SQLite before the step returns (scope/workflow/steps.ts).
 * - `settle(outcome)`: the SDK reports each job as soon as it finishes, so one
 *   slow job does not hold the others' permits or leave them to run again if
 *   the object dies. The call's return value repeats every outcome; a job
 *   settled twice is settled once.
 */
export interface BatchControlApi {
  next(): Promise<AbortNotice | null>;
  settle(outcome: JobOutcome): Promise<void>;
  /**
   * journal: write steps of the batch's running jobs, each fenced by its job's lease (each answer says
   * why not). The SDK sends the writes of one moment together: one call for a batch whose jobs finish
   * a step at once.
   */
  journal(writes: JournalWrite[]): Promise<JournalAnswer[]>;
  /**
   * progress: the latest ctx.progress of the batch's running jobs (job/progress.ts), kept under each job's lease;
   * a report for a job the call no longer holds is dropped. The SDK coalesces reports (runtime/progress.ts).
   */
  progress(items: ProgressReport[]): Promise<void>;
}

/** One job's progress report: its value as JSON text (a number from 0 to 100, or an object of at most 4 KiB). */
export interface ProgressReport {
  id: string;
  value: string;
}

/**
 * What `defineHandlers` produces and what a type's `binding` must point at; `edgequeue/handler` exports it
 * (handler/define-handlers.ts implements it).
 */
export interface HandlerEntrypoint {
  run(batch: DispatchBatch, control: BatchControlApi): Promise<JobOutcome[]>;
}

