/**
 * Changing jobs: cancel one, a scope or the jobs of some dedupe keys; prune terminal jobs; send failed
 * jobs back to pending (docs/http-api.md, The HTTP API).
 *
 * @module
 */
import { z } from "zod";
import { epochMs, JobTypeName, JsonObjectSchema, boundedName, ScopeSchema, TerminalStateSchema } from "./pieces";

const reason = z.string().max(1024);

export const CancelSchema = z.strictObject({
  reason: reason.optional(),
  cascade: z.boolean().optional().meta({ description: "false: leave the children it invoked running (default true: they are cancelled too; docs/workflows.md \"Child jobs\")." }),
});
/** POST /v1/jobs/{id}/rerun (docs/workflows.md "Rerun from a step"). */
export const RerunSchema = z.strictObject({
  fromStep: boundedName(256)
    .optional()
    .meta({ description: "A step name in the job's journal: the steps before its first position keep their journaled results and do not run again; it and everything after run. Left out: the rerun starts over." }),
  payload: JsonObjectSchema.optional().meta({ description: "The rerun's input; left out: the job's own payload." }),
});
export type RerunRequest = z.infer<typeof RerunSchema>;
export const CancelScopeSchema = z.strictObject({ pendingOnly: z.boolean().optional(), reason: reason.optional() });
export const CancelScopeResultSchema = z.object({ cancelled: z.number().int() });
/** POST /v1/cancel: the live jobs of a type under these dedupe keys (in `scope`, or among its unscoped jobs). */
export const CancelKeysSchema = z.strictObject({
  type: JobTypeName,
  dedupeKeys: z.array(boundedName(512)).min(1).max(1000),
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
    scopeType: boundedName(128).optional(),
    scopeId: boundedName(256).optional(),
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
