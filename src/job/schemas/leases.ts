/**
 * Leases: a pull worker's claim, and what the holder of a lease does with its job (heartbeat,
 * complete, fail, release); inline claims, a caller's enqueue under a key leased to it
 * (docs/pull-workers.md, docs/producers.md "Inline claims").
 *
 * @module
 */
import { z } from "zod";
import { EnqueueSchema } from "./enqueue";
import { JobSchema, LeasedJobSchema } from "./job";
import { LogItemSchema } from "./journal";
import { codeVersion, JobId, JobTypeName, JsonObjectSchema, leaseMs, leaseToken, MAX_DELAY_MS, boundedName, ScopeSchema, workerName } from "./pieces";

export const CLAIM_LIMIT_MAX = 100;
/** A claim's longest wait for due work (waitMs). */
export const CLAIM_WAIT_MS_MAX = 30_000;

/** One leased job to complete, as POST /v1/jobs/complete and a claim's `complete` take it. */
const CompleteItemSchema = z.strictObject({
  id: JobId,
  leaseToken,
  result: JsonObjectSchema.optional(),
  version: codeVersion,
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
    .array(boundedName(128))
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
  askedAt: z.number().optional().meta({
    description:
      "The queue's clock as the claim arrived. A job's `leaseExpiresAt − startedAt` is its lease, and `startedAt − askedAt` how long after the claim arrived it began (a claim that waited): a worker places the lease's start no earlier than its send time plus that (docs/pull-workers.md \"Leases\").",
  }),
  answeredAt: z.number().optional().meta({
    description: "The queue's clock as it answered (kept for workers of 0.1.0; `askedAt` is what a worker places its leases by).",
  }),
  completed: CompleteManyResultsSchema.optional().meta({ description: "With `complete`: one answer per item, as POST /v1/jobs/complete answers." }),
});

export const ERROR_MAX_CHARS = 16_384;

export const HeartbeatSchema = z.strictObject({ leaseToken, leaseMs: leaseMs.optional() });
export const HeartbeatResultSchema = z.object({ leaseExpiresAt: z.number() });
export const CompleteSchema = z.strictObject({ leaseToken, result: JsonObjectSchema.optional(), version: codeVersion });
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
  snooze: z
    .boolean()
    .optional()
    .meta({
      description:
        "The attempt ends without an error — a handler's snooze, or the job asked to pause after a step (a step's answer said `paused`): back to pending after `retryAfterMs` (0 by default), unspent, its lastError as it was and no error group counted; `error` is not kept. A job asked to pause pauses here.",
    }),
  frame: z.string().max(200).optional().meta({ description: "The first frame of the error's stack (`at fn (file)`): with its kind and masked message, the error's group (GET /v1/errors)." }),
  nondeterminism: z
    .boolean()
    .optional()
    .meta({ description: "The handler's replay no longer matched the job's journal (NondeterminismError): the job fails now, with failure kind `nondeterminism` (implies `fatal`)." }),
  version: codeVersion,
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
  dedupeKey: boundedName(512),
  worker: workerName,
  leaseMs: leaseMs.default(30_000),
});
export type ClaimKeyRequest = z.infer<typeof ClaimKeySchema>;
export const ClaimKeyResultSchema = z.object({ leased: LeasedJobSchema.nullable() });
