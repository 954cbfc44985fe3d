/**
 * `edgequeue/handler`: what a handler Worker imports.
 *
 * @module
 */
export { defineHandlers } from "./worker";
export { batch, type BatchContext, type BatchHandler, type BatchJob } from "../runtime/batch";
export type { HandlerEntrypoint, HandlersOptions } from "./define-handlers";
export type { Handlers, JobContext, JobHandler, StepOptions, StepRun, EventWaitOptions, InvokeRequest, WaitedEvent, WaitOptions, WaitToken } from "../runtime/context";
export { ChildJobFailedError, JobAbortedError, NondeterminismError, RetryableJobError, SnoozeJobError, TerminalJobError } from "../runtime/errors";
export type { JobTypes, JobTypeName, PayloadOf } from "../sdk";
