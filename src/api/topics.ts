/**
 * Event topics: emit an event (one delivery job per consumer), list the quarantined deliveries, hand
 * one back (docs/schedules-and-events.md). The rule and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import { DeadListSchema, DeadQuerySchema, DeadRetryParams, EmitResultSchema, EmitSchema, TopicParams } from "../job/schemas/events";
import { JobResultSchema } from "../job/schemas/job";
import { EmptyBodySchema } from "../job/schemas/pieces";
import { operation } from "./operation";

export const TOPIC_OPERATIONS = {
  emit: operation({
    access: "produce",
    method: "post",
    path: "/v1/topics/{topic}/events",
    summary: "Emit an event: one delivery job per consumer of the topic (idempotent by event id)",
    params: TopicParams,
    body: EmitSchema,
    response: EmitResultSchema,
    status: 202,
    errors: ["not_found", "queue_full"],
  }),
  listDead: operation({
    access: "read",
    method: "get",
    path: "/v1/topics/{topic}/dead",
    summary: "Deliveries quarantined after maxAttempts failures",
    params: TopicParams,
    query: DeadQuerySchema,
    response: DeadListSchema,
    errors: ["not_found"],
  }),
  retryDead: operation({
    access: "operate",
    method: "post",
    path: "/v1/topics/{topic}/dead/{consumer}/{eventId}/retry",
    summary: "Hand a quarantined delivery back: due now, attempts 0",
    params: DeadRetryParams,
    body: EmptyBodySchema,
    response: JobResultSchema,
    errors: ["not_found", "conflict"],
    client: (call) => async (topic: string, consumer: string, eventId: string) => (await call(topic, consumer, eventId)).job,
  }),
};
