/**
 * Event topics: an event, its deliveries, the quarantined ones (docs/schedules-and-events.md).
 *
 * @module
 */
import { z } from "zod";
import { wellFormed } from "../names";
import { JobTypeName, JsonObjectSchema } from "./pieces";

const EventId = z.string().regex(/^[A-Za-z0-9._:@-]{1,100}$/, "must be 1-100 characters of A-Z a-z 0-9 . _ : @ -");
const topicName = wellFormed(z.string().min(1).max(128));
export const TopicParams = z.strictObject({ topic: topicName });
export const DeadRetryParams = z.strictObject({ topic: topicName, consumer: JobTypeName, eventId: EventId });
export const EmitSchema = z.strictObject({
  payload: JsonObjectSchema,
  id: EventId.optional().meta({ description: "Idempotency: the same event id never creates a second set of deliveries." }),
});
export type EmitRequest = z.infer<typeof EmitSchema>;
export const EmitResultSchema = z.object({
  eventId: z.string(),
  deliveries: z.array(z.string()).meta({ description: "One delivery job id per consumer." }),
  waits: z.number().int().meta({ description: "The jobs' event waits (ctx.waitForEvent) this event ended now; 0 for an event id emitted before. Waits that register a moment later still get it (docs/workflows.md)." }),
});
export const DeadQuerySchema = z.strictObject({
  consumer: JobTypeName.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(4096).optional(),
});
export type DeadQuery = z.infer<typeof DeadQuerySchema>;
export const DeadDeliverySchema = z.object({
  eventId: z.string(),
  consumer: z.string(),
  attempts: z.number().int(),
  error: z.string().nullable(),
  at: z.number().nullable(),
  jobId: z.string(),
});
export type DeadDelivery = z.infer<typeof DeadDeliverySchema>;
export const DeadListSchema = z.object({ items: z.array(DeadDeliverySchema), nextCursor: z.string().nullable() });
