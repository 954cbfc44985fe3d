/**
 * What a handler throws to say how its attempt ended. These classes live only
 * where the handler runs (a handler Worker, a pull worker, `runClaimed`): the
 * SDK turns them into the tagged outcome that crosses the binding or the wire
 * (error classes do not survive RPC).
 *
 * @module
 */

/** Retry this job: after `retryAfterMs` at least, and without spending an attempt when `consumesAttempt` is false. */
export class RetryableJobError extends Error {
  override readonly name = "RetryableJobError";
  readonly retryAfterMs?: number;
  readonly consumesAttempt?: boolean;
  constructor(message: string, options: { retryAfterMs?: number; consumesAttempt?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
    this.consumesAttempt = options.consumesAttempt;
  }
}

/** Fail this job now, whatever attempts remain (`failureKind: "fatal"`). */
export class TerminalJobError extends Error {
  override readonly name = "TerminalJobError";
  /** `cause`: what went wrong underneath; its message is kept in the job's error after this one's. */
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** Not now: run this job again in `delayMs`, without spending the attempt. */
export class SnoozeJobError extends Error {
  override readonly name = "SnoozeJobError";
  constructor(readonly delayMs: number) {
    super(`snoozed for ${delayMs} ms`);
  }
}

/** The reason a job's `ctx.signal` aborted with: `cancelled`, `timeout`, `lease_lost`, or (a pull worker stopping) `shutdown`. */
export class JobAbortedError extends Error {
  override readonly name = "JobAbortedError";
  constructor(readonly reason: "cancelled" | "timeout" | "lease_lost" | "shutdown") {
    super(`job aborted: ${reason}`);
  }
}

/**
 * The handler's steps no longer match the job's journal: a step at some
 * position has another name than the one journaled there (the code changed
 * under a job that had started). Retrying cannot help: the job fails (fatal).
 */
export class NondeterminismError extends Error {
  override readonly name = "NondeterminismError";
}

/**
 * Thrown by `ctx.invoke` when the child job did not complete: it failed (`failureKind` says how), was cancelled,
 * superseded or expired before it started, or its home refused it (`state: "refused"`, its dedupe key held by another job). The parent may
 * catch it; uncaught, the parent's attempt fails like any error (docs/workflows.md "Child jobs").
 */
export class ChildJobFailedError extends Error {
  override readonly name = "ChildJobFailedError";
  constructor(
    readonly childId: string,
    readonly step: string,
    readonly state: string,
    readonly error: string | null,
    readonly failureKind: string | null,
  ) {
    super(`child job ${childId} (ctx.invoke ${JSON.stringify(step)}) ${state}${failureKind ? ` (${failureKind})` : ""}${error ? `: ${error}` : ""}`);
  }
}
