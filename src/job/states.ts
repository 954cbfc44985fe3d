/**
 * The job vocabulary: states and failure kinds.
 *
 * Each list is declared once, `as const`, and is the source of the TypeScript
 * union, the zod enum, the SQL `CHECK` in `src/tables/` and the table in
 * `docs/state-machine.md` (a test keeps the doc in step).
 *
 * @module
 */

export const JOB_STATES = [
  /**
   * Waiting to run. Due when `runAt <= now`, scheduled otherwise.
   * In: enqueue, a retry after a failed attempt, a reaped lease with attempts left,
   * a manual retry of a failed, cancelled, superseded or expired job. Out: claim, cancel, expiry.
   */
  "pending",
  /**
   * Leased by a worker; `leaseToken` and `leaseExpiresAt` are set.
   * In: claim. Out: complete, fail, cancel, or the reap pass when the lease expires.
   */
  "running",
  /**
   * Waiting for the outside world: a signal, a wait token (docs/workflows.md). Its attempt ended and was given back;
   * it holds no lease, call, permit or attempt, only its dedupe key. `wait` says what it waits for, `runAt` until
   * when. In: a handler's `ctx.waitFor…` that found nothing to take yet. Out: what it waits for arrives, its timeout
   * passes (both back to pending, due now), cancel.
   */
  "waiting",
  /** Terminal: the handler succeeded. Out: retention sweep or prune. */
  "completed",
  /**
   * Terminal with a `failureKind`. Out: manual retry, retention sweep or prune.
   */
  "failed",
  /** Terminal: cancelled by a caller. Out: manual retry, retention sweep or prune. */
  "cancelled",
  /**
   * Terminal: an attempt that would have gone back to pending while a newer job of its dedupe key was
   * already pending; that follower carries the newer request. `cancelReason` names it. Out: manual
   * retry, retention sweep or prune.
   */
  "superseded",
  /**
   * Terminal: it was never started before its expiry (`expiresAt`, `expiresInMs` or its type's `expireAfterMs`)
   * passed, so it never runs (docs/guards.md "Expiry before start"). A job that started once is never expired.
   * Out: manual retry (which drops the expiry), retention sweep or prune.
   */
  "expired",
] as const;
export type JobState = (typeof JOB_STATES)[number];

export const TERMINAL_STATES = ["completed", "failed", "cancelled", "superseded", "expired"] as const satisfies readonly JobState[];
export type TerminalState = (typeof TERMINAL_STATES)[number];

/** States in which a job holds its dedupe key. */
export const LIVE_STATES = ["pending", "running", "waiting"] as const satisfies readonly JobState[];

export const FAILURE_KINDS = [
  /** The last attempt failed with a retryable error. */
  "retries_exhausted",
  /** A handler or worker declared the failure terminal (`fatal: true`). */
  "fatal",
  /** The lease of the last attempt expired without complete or fail. */
  "stalled",
  /** The last attempt ran past the job's `timeoutMs`. */
  "timeout",
  /**
   * The handler's replay no longer matched its journal (NondeterminismError: the code changed under a job that had
   * started; docs/deploy.md "Code that changes under running jobs"). Terminal, as a fatal error is.
   */
  "nondeterminism",
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** sqlList renders a constant list as a SQL literal list: `'a', 'b'`. Only for the constants above. */
export function sqlList(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(", ");
}
