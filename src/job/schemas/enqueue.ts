/**
 * An enqueue, one or a batch, and its answer (docs/http-api.md, The HTTP API; keys: docs/guards.md).
 *
 * @module
 */
import { z } from "zod";
import { CALLBACK_URL_FORM, CALLBACK_URL_MAX, hasHttpHost } from "../callback-url";
import { LIMIT_KEY_MAX } from "../limit-key";
import { TERMINAL_STATES } from "../states";
import { MaxAttemptsSchema } from "../max-attempts";
import { parseTraceparent, TRACESTATE_MAX } from "../trace";
import { JobSchema } from "./job";
import { ClientJobId, epochMs, JobTypeName, JsonObjectSchema, MAX_DELAY_MS, boundedName, ScopeSchema, TerminalStateSchema } from "./pieces";

/** A job's own backoff (enqueue `backoff`). maxMs defaults to the larger of baseMs and 5 minutes. */
export const JobBackoffSchema = z
  .strictObject({
    kind: z.enum(["exponential", "fixed"]).default("exponential"),
    baseMs: z.number().int().min(0).max(24 * 3600 * 1000),
    maxMs: z.number().int().min(0).max(7 * 24 * 3600 * 1000).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.maxMs !== undefined && b.maxMs < b.baseMs) ctx.addIssue({ code: "custom", path: ["maxMs"], message: `${b.maxMs} is below baseMs ${b.baseMs}: the cap must be at least the first delay` });
  });

/** W3C trace context (job/trace.ts). */
export const TraceContextSchema = z.strictObject({
  traceparent: z.string().refine((t) => parseTraceparent(t) !== null, "must be a W3C traceparent: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>"),
  tracestate: z.string().max(TRACESTATE_MAX).optional(),
});

/**
 * Where a job's end is POSTed (docs/http-api.md "Completion callbacks"). The schema holds the URL's form; where it may
 * point is the config's business (job/callback-url.ts, checked by the coordinator before anything is written).
 */
export const CallbackSchema = z.strictObject({
  url: z
    .string()
    .max(CALLBACK_URL_MAX)
    .refine(hasHttpHost, CALLBACK_URL_FORM)
    .meta({ description: "A public http(s) URL, no credentials; loopback, private and link-local hosts are refused unless the config's callbacks.allowHosts names them (docs/http-api.md \"Where a callback may go\")." }),
  on: z
    .array(TerminalStateSchema)
    .min(1)
    .max(TERMINAL_STATES.length)
    .refine((on) => new Set(on).size === on.length, "names a state twice")
    .optional()
    .meta({ description: "The end states that call it back (default: completed and failed), each at most once." }),
});

export const EnqueueSchema = z
  .strictObject({
    type: JobTypeName,
    payload: JsonObjectSchema,
    id: ClientJobId.optional().meta({ description: "Idempotency: the same id in the same home returns the same job." }),
    scope: ScopeSchema.optional(),
    dedupeKey: boundedName(512).optional(),
    concurrencyKey: boundedName(LIMIT_KEY_MAX)
      .optional()
      .meta({ description: "The key this job's keyed limits count it under, instead of the one its type's key path reads (docs/guards.md \"Keyed limits\")." }),
    priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
    runAt: epochMs.optional(),
    delayMs: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
    expiresAt: epochMs
      .optional()
      .meta({ description: "If the job has not started by then (epoch ms), it ends `expired` and never runs (docs/guards.md \"Expiry before start\"). Must be after its run time." }),
    expiresInMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_DELAY_MS)
      .optional()
      .meta({ description: "expiresAt as now + this many ms. Without either, the type's expireAfterMs (counted from the job's run time) applies, if set." }),
    maxAttempts: MaxAttemptsSchema.optional(),
    timeoutMs: z.number().int().min(1000).max(7 * 24 * 3600 * 1000).optional(),
    tags: z.array(boundedName(128)).max(32).optional(),
    dedupeMode: z
      .enum(["active", "pending", "cancelRunning", "cancelPending"])
      .optional()
      .meta({
        description:
          "active: one pending-or-running job per key (default); pending: one pending follower may wait behind one running job; cancelRunning: a new job ends the key's live jobs (superseded, a running one aborted) and runs instead; cancelPending: a new job ends the key's pending ones and waits behind the running one (docs/guards.md \"Cancel for the newest\").",
      }),
    coalesce: z.literal("latest").optional().meta({ description: "A duplicate replaces the pending job's payload (never a running job's)." }),
    debounceMs: z.number().int().min(1).max(MAX_DELAY_MS).optional().meta({ description: "Run once after the burst: each duplicate replaces the payload and pushes runAt to now + debounceMs." }),
    throttleMs: z.number().int().min(1).max(MAX_DELAY_MS).optional().meta({ description: "Once a job of the key has started, duplicates within this window get it and create nothing." }),
    trace: TraceContextSchema.optional().meta({
      description:
        "W3C trace context to continue (docs/operating.md \"OpenTelemetry\"): the job's spans join this trace and its handler gets it as ctx.trace. Over HTTP the `traceparent`/`tracestate` headers fill it in; the clients take it from the active OpenTelemetry context.",
    }),
    callback: CallbackSchema.optional().meta({
      description:
        "POST the job's view (`{\"job\": …}`) to `url` when it ends in a state of `on` (default completed and failed), signed with EDGEQUEUE_CALLBACK_SECRET (the `Edgequeue-Signature` header), retried with backoff (docs/http-api.md \"Completion callbacks\"). Refused when the queue has no secret.",
    }),
    backoff: JobBackoffSchema.optional().meta({ description: "This job's retry delays instead of its type's: exponential (full jitter up to min(maxMs, baseMs·2^(attempt−1))) or fixed (baseMs each time)." }),
  })
  .superRefine((body, ctx) => {
    if (body.runAt !== undefined && body.delayMs !== undefined) {
      ctx.addIssue({ code: "custom", path: ["delayMs"], message: "runAt and delayMs are exclusive; give one" });
    }
    for (const key of ["dedupeMode", "coalesce", "debounceMs", "throttleMs"] as const) {
      if (body[key] !== undefined && body.dedupeKey === undefined) ctx.addIssue({ code: "custom", path: [key], message: `${key} needs a dedupeKey` });
    }
    if (body.coalesce !== undefined && (body.dedupeMode === "cancelRunning" || body.dedupeMode === "cancelPending")) {
      ctx.addIssue({ code: "custom", path: ["coalesce"], message: `${body.dedupeMode} always keeps the newest job whole: leave out coalesce` });
    }
    if (body.debounceMs !== undefined && body.throttleMs !== undefined) ctx.addIssue({ code: "custom", path: ["throttleMs"], message: "debounceMs and throttleMs are exclusive" });
    for (const key of ["debounceMs", "throttleMs"] as const) {
      if (body[key] === undefined) continue;
      if (body.dedupeMode !== undefined || body.coalesce !== undefined) {
        ctx.addIssue({ code: "custom", path: [key], message: `${key} is a mode of its own: leave out dedupeMode and coalesce` });
      }
    }
    if (body.expiresAt !== undefined && body.expiresInMs !== undefined) {
      ctx.addIssue({ code: "custom", path: ["expiresInMs"], message: "expiresAt and expiresInMs are exclusive; give one" });
    }
    if (body.expiresAt !== undefined && body.runAt !== undefined && body.expiresAt <= body.runAt) {
      ctx.addIssue({ code: "custom", path: ["expiresAt"], message: `${body.expiresAt} is not after runAt ${body.runAt}: the job would expire before it is due` });
    }
    if (body.expiresInMs !== undefined && body.delayMs !== undefined && body.expiresInMs <= body.delayMs) {
      ctx.addIssue({ code: "custom", path: ["expiresInMs"], message: `${body.expiresInMs} is not more than delayMs ${body.delayMs}: the job would expire before it is due` });
    }
    if (body.debounceMs !== undefined && (body.runAt !== undefined || body.delayMs !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["debounceMs"], message: "debounceMs sets the run time: leave out runAt and delayMs" });
    }
  });
export type EnqueueRequest = z.infer<typeof EnqueueSchema>;

export const ENQUEUE_BATCH_MAX = 1000;
export const EnqueueBatchSchema = z.strictObject({
  jobs: z.array(EnqueueSchema).min(1).max(ENQUEUE_BATCH_MAX),
  return: z
    .enum(["ids", "jobs"])
    .optional()
    .meta({ description: "ids (the default): each result is its job's id and whether it was created; jobs: each result also carries the job's view (`job`), as a single enqueue answers." }),
});

export const EnqueueResultSchema = z.object({
  id: z.string().meta({ description: "The job's id (also when `job` is null)." }),
  job: JobSchema.nullable().meta({ description: "null: the id belonged to a job that finished and was deleted by retention; it is still taken (retention.idempotencyMs), and nothing was created." }),
  created: z.boolean(),
});
export type EnqueueResult = z.infer<typeof EnqueueResultSchema>;
/** A batch's answer per job: its id and whether it was created; the job's view too when the call asked for `return: "jobs"`. */
export const EnqueueBatchItemSchema = EnqueueResultSchema.extend({
  job: JobSchema.nullable().optional().meta({ description: "Only with `return: \"jobs\"`. null: the id belonged to a job deleted by retention (see EnqueueResult)." }),
});
export type EnqueueBatchItem = z.infer<typeof EnqueueBatchItemSchema>;
export const EnqueueBatchResultSchema = z.object({ results: z.array(EnqueueBatchItemSchema) });
