/**
 * The request and response shapes of API.md as zod schemas. The coordinator
 * validates every body and query with them, the RPC entrypoint validates its
 * arguments with them, and `GET /v1/openapi.json` is generated from them.
 *
 * @module
 */
import { z } from "zod";
import { FAILURE_KINDS, JOB_STATES, TERMINAL_STATES } from "./states";
import { isJsonObject, jsonProblem, type JsonObject } from "./json-safe";
import { MaxAttemptsSchema } from "./max-attempts";
import { wellFormed } from "./names";

// ---------------------------------------------------------------- pieces

/** A JSON object checked for JSON safety without being copied (a copy would turn a `__proto__` key into a prototype). */
export const JsonObjectSchema = z
  .custom<JsonObject>()
  .superRefine((value, ctx) => {
    if (value === undefined) {
      ctx.addIssue({ code: "custom", message: "is required: a JSON object ({} when there is nothing to say)" });
      return;
    }
    if (!isJsonObject(value)) {
      ctx.addIssue({ code: "custom", message: `must be a JSON object, got ${describe(value)}` });
      return;
    }
    const problem = jsonProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem.problem, path: problem.path });
  })
  .meta({ description: "A JSON object (no top-level array or scalar)." });

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "a non-plain object" : `a ${typeof value}`;
}

const name = (max: number) => wellFormed(z.string().min(1, "must be a non-empty string").max(max));

export const JobTypeName = name(128).meta({ description: "Job type, e.g. `email.send`." });
export const JobStateSchema = z.enum(JOB_STATES);
export const FailureKindSchema = z.enum(FAILURE_KINDS);
export const TerminalStateSchema = z.enum(TERMINAL_STATES);

export const ScopeSchema = z.strictObject({
  type: name(128),
  id: name(256),
});
export type Scope = z.infer<typeof ScopeSchema>;

/** Client-supplied ids appear in URLs, so they keep to a URL-safe alphabet. */
export const ClientJobId = z
  .string()
  .regex(/^[A-Za-z0-9._:@-]{1,128}$/, "must be 1-128 characters of A-Z a-z 0-9 . _ : @ -");

/** Job ids are opaque; this only bounds their size. */
export const JobId = z.string().min(1).max(2048);

/** Path parameters. */
export const JobIdParams = z.strictObject({ id: JobId });
export const ScopeParams = z.strictObject({ scopeType: name(128), scopeId: name(256) });

const epochMs = z.number().int().min(0).max(8.64e15);
const MAX_DELAY_MS = 366 * 24 * 3600 * 1000;

// ---------------------------------------------------------------- job

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
  });
export type Job = z.infer<typeof JobSchema>;

const JournalEntrySchema = z.object({
  seq: z.number().int(),
  name: z.string(),
  kind: z.enum(["step", "sleep"]),
  result: z.string().nullable().meta({ description: "JSON text; null while an atMostOnce step has started and not finished." }),
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
});
export type LeasedJob = z.infer<typeof LeasedJobSchema>;

// ---------------------------------------------------------------- enqueue

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

export const EnqueueSchema = z
  .strictObject({
    type: JobTypeName,
    payload: JsonObjectSchema,
    id: ClientJobId.optional().meta({ description: "Idempotency: the same id in the same home returns the same job." }),
    scope: ScopeSchema.optional(),
    dedupeKey: name(512).optional(),
    priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
    runAt: epochMs.optional(),
    delayMs: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
    maxAttempts: MaxAttemptsSchema.optional(),
    timeoutMs: z.number().int().min(1000).max(7 * 24 * 3600 * 1000).optional(),
    tags: z.array(name(128)).max(32).optional(),
    dedupeMode: z.enum(["active", "pending"]).optional().meta({ description: "active: one pending-or-running job per key (default); pending: one pending follower may wait behind one running job." }),
    coalesce: z.literal("latest").optional().meta({ description: "A duplicate replaces the pending job's payload (never a running job's)." }),
    debounceMs: z.number().int().min(1).max(MAX_DELAY_MS).optional().meta({ description: "Run once after the burst: each duplicate replaces the payload and pushes runAt to now + debounceMs." }),
    throttleMs: z.number().int().min(1).max(MAX_DELAY_MS).optional().meta({ description: "Once a job of the key has started, duplicates within this window get it and create nothing." }),
    backoff: JobBackoffSchema.optional().meta({ description: "This job's retry delays instead of its type's: exponential (full jitter up to min(maxMs, baseMs·2^(attempt−1))) or fixed (baseMs each time)." }),
  })
  .superRefine((body, ctx) => {
    if (body.runAt !== undefined && body.delayMs !== undefined) {
      ctx.addIssue({ code: "custom", path: ["delayMs"], message: "runAt and delayMs are exclusive; give one" });
    }
    for (const key of ["dedupeMode", "coalesce", "debounceMs", "throttleMs"] as const) {
      if (body[key] !== undefined && body.dedupeKey === undefined) ctx.addIssue({ code: "custom", path: [key], message: `${key} needs a dedupeKey` });
    }
    if (body.debounceMs !== undefined && body.throttleMs !== undefined) ctx.addIssue({ code: "custom", path: ["throttleMs"], message: "debounceMs and throttleMs are exclusive" });
    for (const key of ["debounceMs", "throttleMs"] as const) {
      if (body[key] === undefined) continue;
      if (body.dedupeMode !== undefined || body.coalesce !== undefined) {
        ctx.addIssue({ code: "custom", path: [key], message: `${key} is a mode of its own: leave out dedupeMode and coalesce` });
      }
    }
    if (body.debounceMs !== undefined && (body.runAt !== undefined || body.delayMs !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["debounceMs"], message: "debounceMs sets the run time: leave out runAt and delayMs" });
    }
  });
export type EnqueueRequest = z.infer<typeof EnqueueSchema>;

export const ENQUEUE_BATCH_MAX = 1000;
export const EnqueueBatchSchema = z
  .strictObject({ jobs: z.array(EnqueueSchema).min(1).max(ENQUEUE_BATCH_MAX) });

export const EnqueueResultSchema = z.object({
  id: z.string().meta({ description: "The job's id (also when `job` is null)." }),
  job: JobSchema.nullable().meta({ description: "null: the id belonged to a job that finished and was deleted by retention; it is still taken (retention.idempotencyMs), and nothing was created." }),
  created: z.boolean(),
});
export type EnqueueResult = z.infer<typeof EnqueueResultSchema>;
export const EnqueueBatchResultSchema = z.object({ results: z.array(EnqueueResultSchema) });

// ---------------------------------------------------------------- read

/** A comma-separated list in a query string (`state=failed,cancelled`): its items, trimmed, empty ones left out. */
const commaSplit = z
  .string()
  .max(4096)
  .transform((v) => v.split(",").map((s) => s.trim()).filter((s) => s !== ""));
const oneOrMore = (what: string) => ({ description: `One ${what}, or several separated by commas.` });

export const ListQuerySchema = z.strictObject({
  type: commaSplit.pipe(z.array(JobTypeName).min(1, "give at least one job type").max(32)).meta(oneOrMore("job type")).optional(),
  state: commaSplit.pipe(z.array(JobStateSchema).min(1, "give at least one state").max(32)).meta(oneOrMore("state")).optional(),
  /** Failed jobs of any of these kinds. */
  failureKind: commaSplit.pipe(z.array(FailureKindSchema).min(1, "give at least one failure kind").max(32)).meta(oneOrMore("failure kind")).optional(),
  dedupeKey: name(512).optional(),
  scopeType: name(128).optional(),
  scopeId: name(256).optional(),
  tag: name(128).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(4096).optional(),
}).superRefine((q, ctx) => {
  if ((q.scopeType === undefined) !== (q.scopeId === undefined)) {
    ctx.addIssue({ code: "custom", path: [q.scopeType === undefined ? "scopeType" : "scopeId"], message: "scopeType and scopeId go together" });
  }
});
export type ListQuery = z.infer<typeof ListQuerySchema>;

export const ListResultSchema = z.object({ items: z.array(JobSchema), nextCursor: z.string().nullable() });
export type ListResult = z.infer<typeof ListResultSchema>;

export const StatsQuerySchema = z.strictObject({ type: JobTypeName.optional() });

export const FailedByKindSchema = z.object(
  Object.fromEntries(FAILURE_KINDS.map((k) => [k, z.number().int()])) as Record<(typeof FAILURE_KINDS)[number], z.ZodNumber>,
);
export const StatsSchema = z
  .object({
    pending: z.number().int().meta({ description: "Due pending jobs." }),
    scheduled: z.number().int().meta({ description: "Pending jobs whose runAt is in the future." }),
    running: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    cancelled: z.number().int(),
    superseded: z.number().int().meta({ description: "Jobs whose attempt would have gone back to pending while a newer job of their dedupe key was already pending." }),
    oldestPendingLagMs: z.number().int(),
    failedByKind: FailedByKindSchema,
  });
export type Stats = z.infer<typeof StatsSchema>;
/** `GET /v1/stats`: the counts, and the types nothing will run (catalog/claimed-types.ts). */
export const StatsResultSchema = StatsSchema.extend({
  unhandledTypes: z
    .array(z.string())
    .meta({ description: "Types with due jobs that nothing will run: no binding, not declared in the config, and no pull claim asked for them in the last hour (a typo, or a worker not started)." }),
});
export type StatsResult = z.infer<typeof StatsResultSchema>;

// ---------------------------------------------------------------- change

const reason = z.string().max(1024);

export const CancelSchema = z.strictObject({ reason: reason.optional() });
export const JobResultSchema = z.object({ job: JobSchema });
export const CancelScopeSchema = z.strictObject({ pendingOnly: z.boolean().optional(), reason: reason.optional() });
export const CancelScopeResultSchema = z.object({ cancelled: z.number().int() });
/** POST /v1/cancel: the live jobs of a type under these dedupe keys (in `scope`, or among its unscoped jobs). */
export const CancelKeysSchema = z.strictObject({
  type: JobTypeName,
  dedupeKeys: z.array(name(512)).min(1).max(1000),
  scope: ScopeSchema.optional(),
  reason: reason.optional(),
});
export type CancelKeysRequest = z.infer<typeof CancelKeysSchema>;
export const PruneSchema = z.strictObject({
  olderThan: epochMs,
  states: z.array(TerminalStateSchema).min(1).optional(),
});
export type PruneRequest = z.infer<typeof PruneSchema>;
export const PruneResultSchema = z.object({ deleted: z.number().int() });

export const RetryFailedSchema = z
  .strictObject({
    type: JobTypeName.optional(),
    scopeType: name(128).optional(),
    scopeId: name(256).optional(),
    /** At most this many failed jobs looked at in this call; `nextCursor` goes on from there. Without it, all of them. */
    limit: z.number().int().min(1).max(10_000).optional(),
    cursor: z.string().max(4096).optional(),
  })
  .superRefine((q, ctx) => {
    if ((q.scopeType === undefined) !== (q.scopeId === undefined)) {
      ctx.addIssue({ code: "custom", path: [q.scopeType === undefined ? "scopeType" : "scopeId"], message: "scopeType and scopeId go together" });
    }
  });
export type RetryFailedRequest = z.infer<typeof RetryFailedSchema>;
export const RetryFailedResultSchema = z.object({
  retried: z.number().int(),
  skipped: z.number().int().meta({ description: "Failed jobs left failed because a live job holds their dedupe key." }),
  nextCursor: z.string().nullable().meta({ description: "With `limit`: where the next call goes on (pass it as `cursor`); null when every failed job was looked at." }),
});

export const TimelineSchema = z.object({
  steps: z.array(
    z.object({
      at: z.number(),
      state: JobStateSchema,
      attempt: z.number().int(),
      note: z.string().nullable().meta({ description: "failed: kind and error; cancelled: reason; pending after an attempt: its error; or `manual retry`." }),
    }),
  ),
  earlier: z.number().int().meta({ description: "Older steps not returned (past `limit`)." }),
});

export type Timeline = z.infer<typeof TimelineSchema>;
export const TimelineQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100).meta({ description: "The newest steps to return (a job snoozed for days has thousands)." }),
});

export const ScopesQuerySchema = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50) });
export const ScopeStatsSchema = StatsSchema.extend({
  home: z.string().meta({ description: "The object's name: `scope:<type>:<id>`, or `type:<jobType>:<shard>` for unscoped jobs." }),
  scope: ScopeSchema.nullable(),
});
export type ScopeStats = z.infer<typeof ScopeStatsSchema>;
export const ScopesResultSchema = z.object({ items: z.array(ScopeStatsSchema) });

// ---------------------------------------------------------------- pull workers

export const LEASE_MS_MIN = 1000;
export const LEASE_MS_MAX = 12 * 3600 * 1000;
const leaseMs = z.number().int().min(LEASE_MS_MIN).max(LEASE_MS_MAX);
export const CLAIM_LIMIT_MAX = 100;
/** A claim's longest wait for due work (waitMs). */
export const CLAIM_WAIT_MS_MAX = 30_000;

/** A pull worker's name; `push` is the lease owner of the queue's own dispatch (its attempts are released when their object restarts). */
const workerName = name(128).refine((w) => w !== "push", "`push` is reserved for the queue's own dispatch; name the worker otherwise");
const leaseToken = z.string().min(1).max(128);
/** One ctx.log line a pull worker sends (POST /v1/jobs/{id}/logs, or with a completion). */
const LogItemSchema = z.strictObject({
  at: z.number().int().min(0),
  attempt: z.number().int().min(0).optional().meta({ description: "Default: the job's current attempt." }),
  message: z.string().max(65_536).meta({ description: "Stored clipped: message and fields together at most 2 KiB." }),
  fields: JsonObjectSchema.nullable().optional(),
});
/** One leased job to complete, as POST /v1/jobs/complete and a claim's `complete` take it. */
const CompleteItemSchema = z.strictObject({
  id: JobId,
  leaseToken,
  result: JsonObjectSchema.optional(),
  logs: z
    .array(LogItemSchema)
    .min(1)
    .max(100)
    .optional()
    .meta({ description: "The attempt's ctx.log lines, kept with the job when the completion lands (as POST /v1/jobs/{id}/logs would, without its own call)." }),
});
const CompleteManyResultsSchema = z
  .array(
    z.union([
      z.object({ id: z.string(), ok: z.literal(true) }),
      z.object({ id: z.string(), ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) }),
    ]),
  )
  .meta({ description: "One per item, in order: ok, or the error a single complete of that job would have answered (lease_lost, already_terminal, not_found, payload_too_large)." });

export const ClaimSchema = z.strictObject({
  worker: workerName,
  types: z.array(JobTypeName).min(1).max(32).optional(),
  tags: z
    .array(name(128))
    .min(1)
    .max(32)
    .optional()
    .meta({ description: "Only jobs carrying at least one of these tags (the enqueue's `tags`); a one-at-a-time type whose next job lacks them gives this claim none." }),
  limit: z.number().int().min(1).max(CLAIM_LIMIT_MAX).default(1),
  leaseMs: leaseMs.default(30_000),
  waitMs: z
    .number()
    .int()
    .min(0)
    .max(CLAIM_WAIT_MS_MAX)
    .optional()
    .meta({ description: "With types: when nothing is due, wait up to this long and answer the moment a job of the types comes due (empty when the wait ends)." }),
  complete: z
    .array(CompleteItemSchema)
    .min(1)
    .max(1000)
    .optional()
    .meta({
      description:
        "Jobs this worker finished, completed before the claim as POST /v1/jobs/complete would (answered in `completed`): a worker's complete and next claim in one request. A claim that carries them does not wait (waitMs is not used).",
    }),
});
export type ClaimRequest = z.infer<typeof ClaimSchema>;
export const ClaimResultSchema = z.object({
  jobs: z.array(LeasedJobSchema),
  completed: CompleteManyResultsSchema.optional().meta({ description: "With `complete`: one answer per item, as POST /v1/jobs/complete answers." }),
});

export const ERROR_MAX_CHARS = 16_384;

export const HeartbeatSchema = z.strictObject({ leaseToken, leaseMs: leaseMs.optional() });
export const HeartbeatResultSchema = z.object({ leaseExpiresAt: z.number() });
export const CompleteSchema = z.strictObject({ leaseToken, result: JsonObjectSchema.optional() });
export const ReleaseSchema = z.strictObject({ leaseToken });
/** POST /v1/jobs/complete: several leased jobs completed in one call (a pull worker's completions of one moment). */
export const CompleteManySchema = z.strictObject({ items: z.array(CompleteItemSchema).min(1).max(1000) });
export const CompleteManyResultSchema = z.object({ results: CompleteManyResultsSchema });
export type CompleteManyResult = z.infer<typeof CompleteManyResultSchema>;
export const FailSchema = z.strictObject({
  leaseToken,
  error: z.string().min(1).max(ERROR_MAX_CHARS),
  retryAfterMs: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
  fatal: z.boolean().optional(),
  consumesAttempt: z.boolean().optional(),
});
export type FailRequest = z.infer<typeof FailSchema>;
export const FAIL_OUTCOMES = ["retry_scheduled", "failed", "superseded"] as const;
export type FailOutcome = (typeof FAIL_OUTCOMES)[number];
export const FailResultSchema = z.object({
  job: JobSchema,
  outcome: z.enum(FAIL_OUTCOMES).meta({
    description: "superseded: attempts were left, but a newer job of the same dedupe key was already pending, so this one ended in the state `superseded` in its favour.",
  }),
});

// ---------------------------------------------------------------- events

const EventId = z.string().regex(/^[A-Za-z0-9._:@-]{1,100}$/, "must be 1-100 characters of A-Z a-z 0-9 . _ : @ -");
// ---------------------------------------------------------------- logs

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

// ---------------------------------------------------------------- types

export const TypeParams = z.strictObject({ type: JobTypeName });
export const PauseResultSchema = z.object({
  type: z.string(),
  paused: z.boolean(),
  unreached: z
    .number()
    .int()
    .meta({ description: "Objects holding the type that could not be told now (logged as pause:notice_failed); each learns the change when it next asks, within 5 minutes. Sending the call again is safe." }),
});
export type PauseResult = z.infer<typeof PauseResultSchema>;
export const TypeInfoSchema = z.object({
  type: z.string(),
  paused: z.boolean().meta({ description: "Paused queue-wide: enqueues land, nothing of the type is dispatched or claimed; running jobs finish." }),
  pausedChangedAt: z.number().int().nullable().meta({ description: "When it was last paused or resumed (epoch ms); null if never." }),
  pushed: z.boolean().meta({ description: "The config binds it to a handler Worker; otherwise pull workers claim it." }),
  declared: z.boolean().meta({ description: "Named in the config's `types`." }),
  counts: StatsSchema,
});
export type TypeInfo = z.infer<typeof TypeInfoSchema>;
export const TypeListSchema = z.object({ items: z.array(TypeInfoSchema) });
export type TypeList = z.infer<typeof TypeListSchema>;

const topicName = wellFormed(z.string().min(1).max(128));
export const TopicParams = z.strictObject({ topic: topicName });
export const DeadRetryParams = z.strictObject({ topic: topicName, consumer: JobTypeName, eventId: EventId });
export const EmitSchema = z.strictObject({
  payload: JsonObjectSchema,
  id: EventId.optional().meta({ description: "Idempotency: the same event id never creates a second set of deliveries." }),
});
export type EmitRequest = z.infer<typeof EmitSchema>;
export const EmitResultSchema = z.object({ eventId: z.string(), deliveries: z.array(z.string()).meta({ description: "One delivery job id per consumer." }) });
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

// ---------------------------------------------------------------- pools

export const PoolNameParams = z.strictObject({ name: wellFormed(z.string().min(1).max(200)) });
export const PoolLimitsSchema = z
  .strictObject({
    concurrency: z.number().int().min(1).max(100_000).nullable().optional().meta({ description: "Most cost units running at once; null returns to the configured value." }),
    ratePerMinute: z.number().int().min(1).max(10_000_000).nullable().optional().meta({ description: "Most rate units spent per one-minute window; null returns to the configured value." }),
  })
  .refine((b) => b.concurrency !== undefined || b.ratePerMinute !== undefined, { message: "give concurrency, ratePerMinute, or both" });
export type PoolLimitsRequest = z.infer<typeof PoolLimitsSchema>;

const Limits = z.object({ concurrency: z.number().int().nullable(), ratePerMinute: z.number().int().nullable() });
export const PoolStatusSchema = z.object({
  name: z.string().meta({ description: "A declared pool's name, or `type:<jobType>` for a type's concurrency." }),
  types: z.array(z.string()),
  configured: Limits,
  limits: Limits.meta({ description: "In force: the configured limits, or those set with PUT." }),
  active: z.number().int().meta({ description: "Summed cost of live permits." }),
  permits: z.number().int(),
  window: z.object({ start: z.number().nullable(), spent: z.number().int() }).meta({ description: "The current rate window." }),
  waiting: z.array(z.object({ holder: z.string(), scope: ScopeSchema.nullable(), type: z.string(), since: z.number(), reservedUntil: z.number().nullable() })),
});
export type PoolStatusBody = z.infer<typeof PoolStatusSchema>;
export const PoolListSchema = z.object({ pools: z.array(PoolStatusSchema) });

// ---------------------------------------------------------------- misc

export const HealthSchema = z.object({ ok: z.literal(true), version: z.string() });
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  });
export const EmptyBodySchema = z.strictObject({});

// ---------------------------------------------------------------- durable steps

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

// ---------------------------------------------------------------- inline claims

/** `POST /v1/jobs/claim-or-enqueue`: an enqueue under a key, leased to the caller when no job of the key runs. */
export const ClaimOrEnqueueSchema = z.strictObject({
  job: EnqueueSchema.refine((j) => j.dedupeKey !== undefined, { path: ["dedupeKey"], message: "is required: the key that holds one runner at a time" }).refine(
    (j) => j.dedupeMode === undefined || j.dedupeMode === "pending",
    { path: ["dedupeMode"], message: "claim-or-enqueue uses pending mode: leave it out or say pending" },
  ),
  worker: workerName,
  leaseMs: leaseMs.default(30_000),
});
export type ClaimOrEnqueueRequest = z.infer<typeof ClaimOrEnqueueSchema>;
export const ClaimOrEnqueueResultSchema = z.object({
  leased: LeasedJobSchema.nullable().meta({ description: "The job, leased to the caller: run it now. null: a job of the key is running, and this request waits as its follower (created or coalesced)." }),
  job: JobSchema.meta({ description: "The key's job this request is now part of." }),
  created: z.boolean(),
});
export type ClaimOrEnqueueResult = z.infer<typeof ClaimOrEnqueueResultSchema>;
/** `POST /v1/jobs/claim-key`: lease the key's pending follower once its running job is over. */
export const ClaimKeySchema = z.strictObject({
  type: JobTypeName,
  scope: ScopeSchema.optional(),
  dedupeKey: name(512),
  worker: workerName,
  leaseMs: leaseMs.default(30_000),
});
export type ClaimKeyRequest = z.infer<typeof ClaimKeySchema>;
export const ClaimKeyResultSchema = z.object({ leased: LeasedJobSchema.nullable() });
