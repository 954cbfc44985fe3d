/**
 * `edgequeue/handler`: what a handler Worker imports.
 *
 * @module
 */
export { defineHandlers, type Handlers, type JobContext, type JobHandler, type HandlerEntrypoint } from "./define-handlers";
export { JobAbortedError, RetryableJobError, SnoozeJobError, TerminalJobError } from "./errors";
export type { JobTypes, JobTypeName, PayloadOf } from "../sdk";
