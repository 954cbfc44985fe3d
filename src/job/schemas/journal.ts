/**
 * A job's journal: its durable steps and sleeps, as read and as a pull worker writes them under its
 * lease, and its kept ctx.log lines (docs/handlers.md "Durable steps").
 *
 * @module
 */
import { z } from "zod";
import { wellFormed } from "../names";
import { epochMs, JobId, JsonObjectSchema, leaseToken } from "./pieces";

/** One ctx.log line a pull worker sends (POST /v1/jobs/{id}/logs, or with a completion). */
export const LogItemSchema = z.strictObject({
  at: z.number().int().min(0),
  attempt: z.number().int().min(0).optional().meta({ description: "Default: the job's current attempt." }),
  message: z.string().max(65_536).meta({ description: "Stored clipped: message and fields together at most 2 KiB." }),
  fields: JsonObjectSchema.nullable().optional(),
});

export const LogLineSchema = z.object({
  at: z.number().int().meta({ description: "When the line was written (epoch ms, the handler's clock)." }),
  attempt: z.number().int(),
  message: z.string(),
  fields: JsonObjectSchema.nullable(),
});
export const JobLogsSchema = z.object({ items: z.array(LogLineSchema).meta({ description: "The job's newest 100 ctx.log lines, oldest first." }) });
export type JobLogs = z.infer<typeof JobLogsSchema>;
export const AppendLogsSchema = z.strictObject({
  leaseToken,
  items: z.array(LogItemSchema).min(1).max(100),
});
export type AppendLogsRequest = z.infer<typeof AppendLogsSchema>;

const stepName = wellFormed(z.string().min(1).max(256));
export const StepParams = z.strictObject({ id: JobId, name: stepName });
export const StepSchema = z.object({
  name: z.string(),
  seq: z.number().int().meta({ description: "Position in the job's step calls, from 0." }),
  kind: z.enum(["step", "sleep"]),
  result: z.unknown().meta({ description: "The journaled JSON result; null while an atMostOnce step has started and not finished, and for a sleep." }),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
  attempt: z.number().int().meta({ description: "The attempt that journaled it." }),
  wakeAt: z.number().nullable().meta({ description: "A sleep: when the job is due again." }),
});
export type StepView = z.infer<typeof StepSchema>;
export const StepListSchema = z.object({ items: z.array(StepSchema) });
export const ResolveStepSchema = z.strictObject({
  result: z.unknown().refine((v) => v !== undefined, "is required: the step's JSON result (null is a result)").meta({ description: "What the step did, as it would have returned it." }),
});
const journalStart = z.strictObject({ at: epochMs, seed: z.string().min(1).max(64) });
/** A pull worker's journal write (`edgequeue/worker` makes these; docs/handlers.md "Durable steps"). */
export const AppendStepSchema = z.strictObject({
  leaseToken,
  op: z.enum(["begin", "commit"]),
  seq: z.number().int().min(0).max(100_000),
  name: stepName,
  result: z.unknown().optional().meta({ description: "commit: the step's JSON result." }),
  startedAt: epochMs,
  start: journalStart,
});
export type AppendStepRequest = z.infer<typeof AppendStepSchema>;
export const SleepSchema = z.strictObject({
  leaseToken,
  seq: z.number().int().min(0).max(100_000),
  name: stepName,
  until: epochMs.meta({ description: "The wake time by the worker's clock: used only without `durationMs` (a replay, whose wake time is in the journal)." }),
  durationMs: z.number().int().min(0).max(365 * 86_400_000).optional().meta({ description: "How long it sleeps, from when the queue hears of it, on the queue's clock." }),
  startedAt: epochMs,
  start: journalStart,
});
export type SleepRequest = z.infer<typeof SleepSchema>;
