/**
 * A job's journal: its durable steps and sleeps, as read and as a pull worker writes them under its
 * lease, and its kept ctx.log lines (docs/handlers.md "Durable steps").
 *
 * @module
 */
import { z } from "zod";
import { wellFormed } from "../names";
import { boundedName, codeVersion, epochMs, JobId, JobTypeName, JsonObjectSchema, leaseToken, ProgressSchema, ScopeSchema } from "./pieces";
import { JOURNAL_KINDS } from "../handler-contract";
import { WaitViewSchema } from "./job";

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

/** POST /v1/jobs/{id}/progress: a pull worker's ctx.progress (job/progress.ts), under its lease. */
export const ReportProgressSchema = z.strictObject({
  leaseToken,
  progress: ProgressSchema,
});
export type ReportProgressRequest = z.infer<typeof ReportProgressSchema>;

const stepName = wellFormed(z.string().min(1).max(256));
export const StepParams = z.strictObject({ id: JobId, name: stepName });
export const StepSchema = z.object({
  name: z.string(),
  seq: z.number().int().meta({ description: "Position in the job's step calls, from 0." }),
  kind: z.enum(JOURNAL_KINDS).meta({ description: "step, sleep, signal (a wait for a signal), token (a wait token made), token_wait (a wait for a token's completion), invoke (a child job: its result holds the child's id and end), event (a wait for an event on a topic) or patch (ctx.patched: where the job first reached the patch)." }),
  result: z.unknown().meta({
    description: "The journaled JSON result; null while an atMostOnce step has started and not finished, and for a sleep. A wait: `{data}` once it ended, null while open or after its timeout. A token: the token.",
  }),
  startedAt: z.number(),
  finishedAt: z.number().nullable().meta({ description: "null while an atMostOnce step runs, or while a wait is open." }),
  attempt: z.number().int().meta({ description: "The attempt that journaled it." }),
  wakeAt: z.number().nullable().meta({ description: "A sleep: when the job is due again; a wait: its timeout." }),
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
  op: z.enum(["begin", "commit", "token", "patch"]).meta({
    description: "begin: an atMostOnce step starts; commit: a step's result; token: make a wait token (ctx.createWaitToken), answered as `token`; patch: ctx.patched's marker where the job first reached it (docs/deploy.md).",
  }),
  seq: z.number().int().min(0).max(100_000),
  name: stepName,
  result: z.unknown().optional().meta({ description: "commit: the step's JSON result." }),
  timeoutMs: z.number().int().min(0).max(365 * 86_400_000).nullable().optional().meta({ description: "token: how long the token is good for (default: no expiry)." }),
  sensitive: z.boolean().optional().meta({ description: "commit: the step ran with `{ sensitive: true }`: its value reads \"[redacted]\" everywhere but the job's handler (docs/operating.md \"Sensitive values\")." }),
  startedAt: epochMs,
  start: journalStart,
});
export type AppendStepRequest = z.infer<typeof AppendStepSchema>;
export const WaitTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string().meta({ description: "POST `{\"data\"}` here, with no queue token, to complete it." }),
  url: z.string().nullable().meta({ description: "`path` on the queue's `publicUrl`, or null when none is configured." }),
  expiresAt: z.number().nullable(),
});
export const AppendStepResultSchema = z.object({
  ok: z.literal(true),
  token: WaitTokenSchema.optional().meta({ description: "op token: the wait token made (the first, if the write was sent twice)." }),
  paused: z.literal(true).optional().meta({ description: "The job was asked to pause (POST /v1/jobs/{id}/pause): end the attempt now, unspent (a snooze: POST /v1/jobs/{id}/fail with consumesAttempt false), and it waits paused until resumed." }),
});
export const SleepSchema = z.strictObject({
  leaseToken,
  seq: z.number().int().min(0).max(100_000),
  name: stepName,
  until: epochMs.meta({ description: "The wake time by the worker's clock: used only without `durationMs` (a replay, whose wake time is in the journal)." }),
  durationMs: z.number().int().min(0).max(365 * 86_400_000).optional().meta({ description: "How long it sleeps, from when the queue hears of it, on the queue's clock." }),
  startedAt: epochMs,
  start: journalStart,
  version: codeVersion,
});
export type SleepRequest = z.infer<typeof SleepSchema>;

const waitItem = z.strictObject({
  seq: z.number().int().min(0).max(100_000),
  kind: z.enum(["signal", "token_wait", "invoke", "event"]),
  name: stepName,
  timeoutMs: z.number().int().min(0).max(365 * 86_400_000).nullable().optional().meta({ description: "A new wait: how long it may wait, from when the queue hears of it." }),
  until: epochMs.nullable().optional().meta({ description: "A new token wait: the token's expiry (the queue's clock)." }),
  held: z.boolean().optional().meta({ description: "The journal holds it already, open: its timeout stands." }),
  startedAt: epochMs,
  request: z.unknown().optional().meta({ description: "A new invoke (ctx.invoke): the child's enqueue as POST /v1/jobs takes it, without id (the child's id is derived from the job's and the step's name)." }),
  match: z.record(z.string(), z.unknown()).optional().meta({ description: "A new event wait (ctx.waitForEvent; name: the topic): the payload fields the event must have, with these values." }),
});
/** A pull worker's attempt ends on waits (ctx.waitForSignal / waitForToken; docs/workflows.md). */
export const WaitSchema = z.strictObject({
  leaseToken,
  waits: z.array(waitItem).min(1).max(5000),
  start: journalStart,
  version: codeVersion,
});
export type WaitRequest = z.infer<typeof WaitSchema>;

const signalData = z.unknown().optional().meta({ description: "Any JSON (default null): what the wait answers, as `{data}`." });
export const SignalParams = z.strictObject({ id: JobId, name: stepName });
export const SignalBodySchema = z.strictObject({ data: signalData });
/** A signal for the live job that holds a key (POST /v1/signals). */
export const KeySignalSchema = z.strictObject({
  type: JobTypeName,
  dedupeKey: boundedName(512),
  scope: ScopeSchema.optional(),
  name: stepName,
  data: signalData,
});
export type KeySignal = z.infer<typeof KeySignalSchema>;
export const SignalResultSchema = z.object({
  id: z.string().meta({ description: "The job the signal went to." }),
  delivered: z.enum(["resumed", "kept"]).meta({ description: "resumed: it ended the job's wait; kept: the job was not waiting for it yet, and it is kept for its next wait of that name (signals.retainMs)." }),
  waitingFor: z
    .array(WaitViewSchema)
    .nullable()
    .meta({
      description:
        "What the job waits for now, as its view's waitingFor: null when it waits for nothing (pending, running, or resumed by this signal). A `kept` signal with waits here went to a job that waits for something else — a misspelled signal name, say — and the job goes on waiting for those.",
    }),
});
export const TokenParams = z.strictObject({ token: z.string().min(1).max(2048) });
export const TokenBodySchema = z.strictObject({ data: signalData });
export type SignalResult = z.infer<typeof SignalResultSchema>;
export const TokenResultSchema = SignalResultSchema;
