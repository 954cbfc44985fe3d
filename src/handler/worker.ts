/**
 * defineHandlers for the Workers runtime: the entrypoint extends
 * WorkerEntrypoint, so the queue's service binding can call its `run` over RPC.
 *
 * @module
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import type { Handlers } from "../runtime/context";
import { type HandlerEntrypoint, type HandlersClass, type HandlersOptions, handlersOn } from "./define-handlers";

/**
 * defineHandlers: turn a map of job type → async function into the
 * WorkerEntrypoint a handler Worker exports and the queue's type `binding`
 * points at (docs/handlers.md "Write a handler Worker").
 */
export function defineHandlers<E = unknown>(handlers: Handlers<E>, options: HandlersOptions = {}): HandlersClass<new (ctx: ExecutionContext, env: E) => WorkerEntrypoint<E> & HandlerEntrypoint> {
  return handlersOn(WorkerEntrypoint as unknown as new (ctx: unknown, env: E) => { env: E }, handlers, options) as unknown as HandlersClass<new (ctx: ExecutionContext, env: E) => WorkerEntrypoint<E> & HandlerEntrypoint>;
}
