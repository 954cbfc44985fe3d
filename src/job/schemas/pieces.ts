/**
 * The pieces the API's shapes are made of (docs/http-api.md, The HTTP API): JSON objects, names
 * (bounded, well-formed Unicode: job/names.ts), job types and states, scopes, ids, times, leases and
 * worker names, and the few shapes every operation shares (errors, health, an empty body). The shapes
 * by area are in the modules beside this one; job/schemas/index.ts gathers them.
 *
 * @module
 */
import { z } from "zod";
import { FAILURE_KINDS, JOB_STATES, TERMINAL_STATES } from "../states";
import { isJsonObject, jsonProblem, type JsonObject } from "../json-safe";
import { wellFormed } from "../names";
import { progressError } from "../progress";

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

/** A job's progress (job/progress.ts): a number from 0 to 100, or a JSON object of at most 4 KiB. */
export const ProgressSchema = z
  .union([z.number(), JsonObjectSchema])
  .superRefine((value, ctx) => {
    const problem = progressError(value, "it");
    if (problem) ctx.addIssue({ code: "custom", message: problem.replace(/^it /, "") });
  })
  .meta({ description: "A number from 0 to 100, or a JSON object of at most 4 KiB (its JSON's UTF-8 bytes)." });

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "a non-plain object" : `a ${typeof value}`;
}

/** A name: 1 to `max` characters of well-formed Unicode. */
export const boundedName = (max: number) => wellFormed(z.string().min(1, "must be a non-empty string").max(max));

export const JobTypeName = boundedName(128).meta({ description: "Job type, e.g. `email.send`." });
export const JobStateSchema = z.enum(JOB_STATES);
export const FailureKindSchema = z.enum(FAILURE_KINDS);
export const TerminalStateSchema = z.enum(TERMINAL_STATES);

export const ScopeSchema = z.strictObject({
  type: boundedName(128),
  id: boundedName(256),
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

/**
 * Where a caller's own id lives (`GET /v1/jobs/{id}?type=` or `?scopeType=&scopeId=`): a job's full id names its
 * object, the id a caller gave at enqueue does not, so the type (unscoped jobs) or the scope says where to look —
 * as BullMQ's `getJob(id)` finds a job by the id it was added with (docs/http-api.md "Ids").
 */
export const JobWhereQuerySchema = z
  .strictObject({
    type: boundedName(128).optional().meta({ description: "With a caller's own id: the job's type (an unscoped job: its type's objects are asked)." }),
    scopeType: boundedName(128).optional(),
    scopeId: boundedName(256).optional().meta({ description: "With scopeType and a caller's own id: the job's scope." }),
  })
  .superRefine((q, ctx) => {
    if ((q.scopeType === undefined) !== (q.scopeId === undefined)) ctx.addIssue({ code: "custom", path: [q.scopeType === undefined ? "scopeType" : "scopeId"], message: "scopeType and scopeId go together" });
  });
export type JobWhereQuery = z.infer<typeof JobWhereQuerySchema>;
export const ScopeParams = z.strictObject({ scopeType: boundedName(128), scopeId: boundedName(256) });

export const epochMs = z.number().int().min(0).max(8.64e15);
export const MAX_DELAY_MS = 366 * 24 * 3600 * 1000;

export const LEASE_MS_MIN = 1000;
export const LEASE_MS_MAX = 12 * 3600 * 1000;
export const leaseMs = z.number().int().min(LEASE_MS_MIN).max(LEASE_MS_MAX);

/** A pull worker's name; `push` is the lease owner of the queue's own dispatch (its attempts are released when their object restarts). */
export const workerName = boundedName(128).refine((w) => w !== "push", "`push` is reserved for the queue's own dispatch; name the worker otherwise");
export const leaseToken = z.string().min(1).max(128);

export const HealthSchema = z.object({
  ok: z.literal(true),
  version: z.string(),
  budgets: z
    .object({
      paused: z.array(z.string()).meta({ description: "Budgets whose hard limit holds types paused in this window (docs/operating.md \"Spend caps\")." }),
      warned: z.array(z.string()).meta({ description: "Budgets past their soft limit in this window." }),
    })
    .optional()
    .meta({ description: "Present when the config has budgets." }),
});
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  });
export const EmptyBodySchema = z.strictObject({});

/** The version of the code that ran an attempt, sent with the write that ends it (docs/deploy.md "Code that changes under running jobs"). */
export const codeVersion = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .meta({ description: "The version of the code that ran the attempt (a pull worker's `version` option): kept with the attempt's end and shown in the job's timeline." });
