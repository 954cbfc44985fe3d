/**
 * Bulk actions by filter (docs/http-api.md "Bulk actions"): `POST /v1/jobs/cancel` and `POST /v1/jobs/retry` act
 * on every job a filter matches, across homes, a page per call with a cursor.
 *
 * @module
 */
import { z } from "zod";
import { epochMs, FailureKindSchema, JobStateSchema, JobTypeName, boundedName } from "./pieces";

/** One value or a list of them (a JSON body carries a list as an array). */
const oneOrList = <T extends z.ZodType>(item: T, what: string) =>
  z
    .union([item, z.array(item).min(1, `give at least one ${what}`).max(32)])
    .transform((v) => (Array.isArray(v) ? v : [v]) as z.output<T>[])
    .meta({ description: `One ${what}, or a list of them (any of them).` });

export const JobFilterSchema = z
  .strictObject({
    type: oneOrList(JobTypeName, "job type").optional(),
    state: oneOrList(JobStateSchema, "state").optional(),
    failureKind: oneOrList(FailureKindSchema, "failure kind").optional(),
    tag: boundedName(128).optional(),
    scopeType: boundedName(128).optional(),
    scopeId: boundedName(256).optional(),
    createdAfter: epochMs.optional().meta({ description: "Created strictly after this time (epoch ms)." }),
    createdBefore: epochMs.optional().meta({ description: "Created strictly before this time." }),
    finishedAfter: epochMs.optional().meta({ description: "Finished strictly after this time: only finished jobs match." }),
    finishedBefore: epochMs.optional().meta({ description: "Finished strictly before this time: only finished jobs match." }),
  })
  .superRefine((f, ctx) => {
    if ((f.scopeType === undefined) !== (f.scopeId === undefined)) {
      ctx.addIssue({ code: "custom", path: [f.scopeType === undefined ? "scopeType" : "scopeId"], message: "scopeType and scopeId go together" });
    }
  });
export type JobFilter = z.infer<typeof JobFilterSchema>;

/** Jobs looked at per call by default, and at most. */
export const BULK_LIMIT_DEFAULT = 1000;
export const BULK_LIMIT_MAX = 10_000;

const bulkFields = {
  filter: JobFilterSchema.meta({ description: "Which jobs: every field given must match. `{}` matches every job in the states the action acts on." }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(BULK_LIMIT_MAX)
    .optional()
    .meta({ description: `At most this many matching jobs are looked at in this call (default ${BULK_LIMIT_DEFAULT}); \`nextCursor\` goes on from there.` }),
  cursor: z.string().max(4096).optional().meta({ description: "A previous answer's nextCursor." }),
  dryRun: z.boolean().optional().meta({ description: "Count the jobs that would be acted on, changing nothing." }),
};

export const BulkCancelSchema = z.strictObject({ ...bulkFields, reason: z.string().max(1024).optional() });
export type BulkCancelRequest = z.infer<typeof BulkCancelSchema>;
export const BulkRetrySchema = z.strictObject(bulkFields);
export type BulkRetryRequest = z.infer<typeof BulkRetrySchema>;
export const BulkRerunSchema = z.strictObject({
  ...bulkFields,
  fromStep: boundedName(256)
    .optional()
    .meta({ description: "Rerun each from this step of its journal (a job whose journal lacks it is skipped); left out: from the start." }),
});
export type BulkRerunRequest = z.infer<typeof BulkRerunSchema>;

export const BulkResultSchema = z.object({
  changed: z.number().int().meta({ description: "Jobs cancelled (retried, rerun) by this call; with dryRun, those that matched." }),
  skipped: z.number().int().meta({ description: "Jobs that matched but were left as they were: a retry or rerun whose dedupe key a live job holds, a rerun whose journal lacks fromStep, or a job that moved meanwhile." }),
  nextCursor: z.string().nullable().meta({ description: "Where the next call goes on (pass it as `cursor`, with the same filter); null when every matching job was looked at." }),
});
export type BulkResult = z.infer<typeof BulkResultSchema>;
