/**
 * The `edgequeue` package: what producers import (the typed clients) and the
 * job-type registry both sides share. Handler Workers import
 * `edgequeue/handler` (it needs the Workers runtime); this module runs
 * anywhere — Workers, Node, browsers.
 *
 * @example
 * declare module "edgequeue" {
 *   interface JobTypes {
 *     "email.send": { to: string; subject: string };
 *   }
 * }
 *
 * @module
 */
import type { JsonObject } from "./job/json-safe";

/**
 * JobTypes: augment it to type payloads by job type, on both ends (the
 * producer's `enqueue` and the handler's `payload`). Left empty, any type
 * name and any JSON object are accepted.
 */
export interface JobTypes {}

/** The job type names: the registered ones, or any string when none are. */
export type JobTypeName = keyof JobTypes extends never ? string : Extract<keyof JobTypes, string>;

/** The payload of a job type: as registered, else any JSON object. */
export type PayloadOf<T extends string> = T extends keyof JobTypes ? JobTypes[T] : JsonObject;

export type { JsonObject } from "./job/json-safe";
export { defineConfig, type QueueConfigInput } from "./config/define-config";
export type { Job, LeasedJob, ListResult, Scope, Stats, StatsResult } from "./job/schemas";
export type { LifecycleEvent, LifecycleEventName } from "./job/lifecycle-event";
export type { Enqueued, EnqueuedId, EnqueueInput, QueueClient, TypedJob } from "./client/producer";
export type { QueueOperations } from "./client/calls";
export { createClient, type QueueBinding, type RpcQueueClient, type ServiceBindingLike } from "./client/rpc-client";
export { createHttpClient, type HttpClientOptions, type HttpQueueClient, type QueueOperatorClient } from "./client/http-client";
export { OPERATIONS, type OperationId, type OperationInput } from "./api";
export { QueueClientError } from "./client/errors";
export { createQueueEvents, type QueueEvent, type QueueEventName, type QueueEvents, type QueueEventsOptions } from "./client/queue-events";
export { subscribe, watchJob, type SubscribeOptions, type Subscription, type SubscriptionMessage, type WatchedJob, type WatchJobHandlers } from "./client/subscribe";
