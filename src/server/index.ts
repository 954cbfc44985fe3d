/**
 * `edgequeue/server`: the queue itself, for a Worker of the user's own — the
 * Worker, the `EdgeQueue` RPC entrypoint and the Durable Object classes, made
 * by createQueue from a config given in code (README "Add edgequeue to a
 * Worker").
 *
 * @module
 */
export { createQueue, type CreateQueueOptions, type HandlersClassLike } from "./create-queue";
export { defineConfig, type QueueConfigInput } from "../config/define-config";
export { ConfigError } from "../config/load";
export { LOCAL_HANDLERS, QUEUE_MIGRATIONS, QUEUE_OBJECTS } from "./bindings";
export type { Env as QueueEnv } from "../env";
