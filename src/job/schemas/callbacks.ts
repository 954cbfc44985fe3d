/**
 * Completion callbacks that died (docs/http-api.md "Completion callbacks"): `GET /v1/callbacks/dead`.
 *
 * @module
 */
import { z } from "zod";
import { boundedName, JobTypeName } from "./pieces";

export const DeadCallbacksQuerySchema = z
  .strictObject({
    type: JobTypeName.optional().meta({ description: "Only this type's jobs (its own objects, then the scopes the catalog lists with its jobs)." }),
    scopeType: boundedName(128).optional(),
    scopeId: boundedName(256).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    cursor: z.string().max(2048).optional().meta({ description: "The `nextCursor` of the page before." }),
  })
  .superRefine((q, ctx) => {
    if ((q.scopeType === undefined) !== (q.scopeId === undefined)) ctx.addIssue({ code: "custom", path: [q.scopeType === undefined ? "scopeType" : "scopeId"], message: "scopeType and scopeId go together" });
  });
export type DeadCallbacksQuery = z.infer<typeof DeadCallbacksQuerySchema>;

export const DeadCallbackSchema = z.object({
  jobId: z.string(),
  type: z.string(),
  url: z.string(),
  state: z.string().meta({ description: "The state the job ended in." }),
  tries: z.number().int(),
  lastError: z.string().nullable().meta({ description: "What the last try got: `answered 500`, a timeout, a network error." }),
  deadAt: z.number(),
});

export const DeadCallbacksSchema = z.object({
  items: z.array(DeadCallbackSchema),
  nextCursor: z.string().nullable().meta({ description: "More objects to look in: pass it back as `cursor`; null when done." }),
});
export type DeadCallbacks = z.infer<typeof DeadCallbacksSchema>;
