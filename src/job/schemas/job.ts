/**
 * A job as the API answers it (and leased, with its lease and journal), and its timeline
 * (docs/http-api.md, The HTTP API; docs/state-machine.md).
 *
 * @module
 */
import { z } from "zod";
import { FailureKindSchema, JobStateSchema, JsonObjectSchema, ProgressSchema, ScopeSchema } from "./pieces";
import { JOURNAL_KINDS } from "../handler-contract";

/** One wait of a waiting job (scope/workflow/waits.ts WaitView). */
export const WaitViewSchema = z.object({
  kind: z.enum(["signal", "token", "invoke", "event", "pause"]).meta({
    description:
      "signal: a signal of this name ends it; token: the completion of the wait token of this name; invoke: the end of the child job started under this step name; event: an event on the topic of this name whose payload matches; pause: the job is paused, and its resume ends it (POST /v1/jobs/{id}/resume; docs/http-api.md \"Pause and resume one job\").",
  }),
  name: z.string(),
  child: z.string().optional().meta({ description: "invoke: the child job's id." }),
  until: z.number().nullable().meta({ description: "When it times out (epoch ms), or null for never." }),
  dueAt: z.number().nullable().optional().meta({ description: "pause: when the job is due once resumed (it keeps the time it was due when paused); null while other waits or its attempt go on (it is due when resumed)." }),
});

export const JobSchema = z
  .object({
    id: z.string(),
    type: z.string(),
    payload: JsonObjectSchema,
    scope: ScopeSchema.nullable(),
    state: JobStateSchema,
    failureKind: FailureKindSchema.nullable(),
    priority: z.number().int(),
    runAt: z.number(),
    attempts: z.number().int(),
    maxAttempts: z.number().int(),
    timeoutMs: z.number().int().nullable(),
    dedupeKey: z.string().nullable(),
    tags: z.array(z.string()),
    lastError: z.string().nullable(),
    result: JsonObjectSchema.nullable(),
    cancelReason: z.string().nullable(),
    dedupeMode: z.string().nullable().meta({ description: "How the dedupe key behaves: active, active+latest, pending, pending+latest, debounce, throttle." }),
    scheduledFor: z.number().nullable().meta({ description: "The schedule slot this job was fired for; null when not from a schedule." }),
    backoff: z
      .object({ kind: z.enum(["exponential", "fixed"]), baseMs: z.number(), maxMs: z.number() })
      .nullable()
      .meta({ description: "The job's own backoff, when it was enqueued with one; null: its type's." }),
    createdAt: z.number(),
    updatedAt: z.number(),
    startedAt: z.number().nullable().meta({ description: "When the latest attempt was claimed." }),
    finishedAt: z.number().nullable().meta({ description: "When it reached a terminal state." }),
    waitingFor: z
      .array(WaitViewSchema)
      .nullable()
      .meta({
        description:
          "A waiting job's waits (docs/workflows.md): what would end each, and its timeout; a running job asked to pause shows its pause here (it pauses at its next step, or where its attempt would go back to pending); null otherwise. A waiting job's runAt is the earliest timeout.",
      }),
    parentId: z.string().nullable().meta({ description: "The job that enqueued this one with ctx.invoke and waits for its end (docs/workflows.md \"Child jobs\"); null for any other job." }),
    concurrencyKey: z
      .string()
      .nullable()
      .meta({ description: "The key value its type's keyed limits (or its batch's key) count it under (the enqueue's concurrencyKey, or what the type's key path read; docs/guards.md \"Keyed limits\"); null for a type without one." }),
    expiresAt: z
      .number()
      .nullable()
      .meta({ description: "If it has not started by then it ends `expired` and never runs (docs/guards.md \"Expiry before start\"); null: it does not expire. A manual retry drops it." }),
    progress: ProgressSchema.nullable().meta({ description: "The latest ctx.progress the handler reported (docs/handlers.md \"Progress\"), kept across attempts; null until one is." }),
    progressAt: z.number().nullable().meta({ description: "When the latest progress was reported (the queue's clock), or null." }),
    callback: z
      .object({ url: z.string(), on: z.array(z.string()) })
      .nullable()
      .meta({ description: "Where its end is POSTed, and for which end states (the enqueue's callback; docs/http-api.md \"Completion callbacks\"); null for none." }),
    trace: z
      .object({ traceparent: z.string(), tracestate: z.string().optional() })
      .nullable()
      .meta({ description: "The W3C trace context its enqueue carried, which its spans continue (docs/operating.md \"OpenTelemetry\"); null for none." }),
    rerunOf: z.string().nullable().meta({ description: "The job this one reruns (POST /v1/jobs/{id}/rerun; docs/workflows.md \"Rerun from a step\"); null for any other job." }),
    reruns: z.array(z.string()).meta({ description: "The reruns made of this job, oldest first." }),
    codeVersion: z.string().nullable().meta({
      description:
        "The version of the code that ran its latest ended attempt, as its handler reported it: the Worker's version metadata, else its configured `version` (docs/deploy.md \"Code that changes under running jobs\"). Null when none was reported. Earlier attempts' versions are in the timeline.",
    }),
  });
export type Job = z.infer<typeof JobSchema>;

const JournalEntrySchema = z.object({
  seq: z.number().int(),
  name: z.string(),
  kind: z.enum(JOURNAL_KINDS),
  result: z.string().nullable().meta({ description: "JSON text; null while an atMostOnce step has started and not finished, or while a wait is open." }),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
  attempt: z.number().int(),
  wakeAt: z.number().nullable(),
});
export const LeasedJobSchema = JobSchema.extend({
  leaseToken: z.string(),
  leaseExpiresAt: z.number(),
  journal: z
    .object({ start: z.object({ at: z.number(), seed: z.string() }).nullable(), entries: z.array(JournalEntrySchema) })
    .optional()
    .meta({ description: "The job's journal of durable steps, when it has one: a worker replays journaled steps from it (docs/handlers.md, Durable steps)." }),
  sensitive: z.literal(true).optional().meta({ description: "Its type is marked sensitive: a worker prints its ctx.log values `[redacted]` (docs/operating.md \"Sensitive values\")." }),
});
export type LeasedJob = z.infer<typeof LeasedJobSchema>;

export const JobResultSchema = z.object({ job: JobSchema });

export const TimelineSchema = z.object({
  steps: z.array(
    z.object({
      at: z.number(),
      state: JobStateSchema,
      attempt: z.number().int(),
      note: z.string().nullable().meta({ description: "failed: kind and error; cancelled: reason; pending after an attempt: its error; `manual retry`; waiting: what for; pending after a wait: what ended it." }),
      version: z.string().nullable().optional().meta({ description: "On a step that ended an attempt: the version of the code that ran it (`codeVersion`), when its handler reported one." }),
    }),
  ),
  earlier: z.number().int().meta({ description: "Older steps not returned (past `limit`)." }),
});

export type Timeline = z.infer<typeof TimelineSchema>;
export const TimelineQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100).meta({ description: "The newest steps to return (a job snoozed for days has thousands)." }),
});

/** GET /v1/jobs/{id}/children: the children a job invoked (ctx.invoke), in call order, paged. */
export const ChildrenQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().regex(/^\d{1,9}$/, "a cursor this list answered as next").optional(),
});
export const ChildrenSchema = z.object({
  children: z.array(
    z.object({
      step: z.string().meta({ description: "The ctx.invoke step name it was started under." }),
      id: z.string(),
      job: JobSchema.nullable().meta({ description: "null: not enqueued yet (its enqueue is on its way), or deleted by retention." }),
    }),
  ),
  next: z.string().nullable().meta({ description: "The cursor of the next page, or null." }),
});
export type Children = z.infer<typeof ChildrenSchema>;
