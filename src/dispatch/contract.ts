/**
 * The contract between a scope object and a handler Worker, as it crosses the
 * service binding (DESIGN.md §4). Plain data only: error classes do not
 * survive RPC, so a handler's verdict is a tagged outcome per job.
 *
 * @module
 */
import type { JsonObject } from "../job/json-safe";
import type { Scope } from "../job/schemas";

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
}

export interface DispatchBatch {
  type: string;
  jobs: DispatchJob[];
}

/** The verdict on one job. An uncaught throw in the handler is a `retry`. */
export type HandlerOutcome =
  | { kind: "completed"; result?: JsonObject | null }
  | { kind: "retry"; error: string; retryAfterMs?: number; consumesAttempt?: boolean }
  | { kind: "failed"; error: string }
  | { kind: "snooze"; delayMs: number };

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
 * - `settle(outcome)`: the SDK reports each job as soon as it finishes, so one
 *   slow job does not hold the others' permits or leave them to run again if
 *   the object dies. The call's return value repeats every outcome; a job
 *   settled twice is settled once.
 */
export interface BatchControlApi {
  next(): Promise<AbortNotice | null>;
  settle(outcome: JobOutcome): Promise<void>;
}

/** What `defineHandlers` produces and what a type's `binding` must point at. */
export interface HandlerEntrypointApi {
  run(batch: DispatchBatch, control: BatchControlApi): Promise<JobOutcome[]>;
}
