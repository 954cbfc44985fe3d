/**
 * `edgequeue/handler` outside the Workers runtime (Node, plain vitest): the
 * same exports, with `defineHandlers` building a plain class, so a handler
 * module loads where `cloudflare:workers` does not exist and its functions can
 * be tested with `edgequeue/testing`. package.json picks this file for every
 * condition but `workerd` / `worker`.
 *
 * @module
 */
import type { Handlers } from "../runtime/context";
import { type HandlerEntrypoint, type HandlersClass, type HandlersOptions, handlersOn } from "./define-handlers";

class PlainEntrypoint<E> {
  constructor(
    readonly ctx: unknown,
    readonly env: E,
  ) {}
}

export function defineHandlers<E = unknown>(handlers: Handlers<E>, options: HandlersOptions = {}): HandlersClass<new (ctx: unknown, env: E) => HandlerEntrypoint & { env: E }> {
  return handlersOn(PlainEntrypoint<E>, handlers, options);
}

export type { HandlerEntrypoint, HandlersOptions } from "./define-handlers";
export type { Handlers, JobContext, JobHandler, StepOptions, StepRun, EventWaitOptions, InvokeRequest, WaitedEvent, WaitOptions, WaitToken } from "../runtime/context";
export { batch, type BatchContext, type BatchHandler, type BatchJob } from "../runtime/batch";
export { ChildJobFailedError, JobAbortedError, NondeterminismError, RetryableJobError, SnoozeJobError, TerminalJobError } from "../runtime/errors";
export type { JobTypes, JobTypeName, PayloadOf } from "../sdk";
