/**
 * Listing jobs: the filters (lists as comma-separated text, as a query string carries them) and a
 * page of jobs (docs/http-api.md, The HTTP API).
 *
 * @module
 */
import { z } from "zod";
import { JobSchema } from "./job";
import { epochMs, FailureKindSchema, JobStateSchema, JobTypeName, boundedName } from "./pieces";

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
  dedupeKey: boundedName(512).optional(),
  scopeType: boundedName(128).optional(),
  scopeId: boundedName(256).optional(),
  tag: boundedName(128).optional(),
  createdAfter: z.coerce.number().pipe(epochMs).optional().meta({ description: "Created strictly after this time (epoch ms)." }),
  createdBefore: z.coerce.number().pipe(epochMs).optional().meta({ description: "Created strictly before this time." }),
  finishedAfter: z.coerce.number().pipe(epochMs).optional().meta({ description: "Finished strictly after this time: only finished jobs match." }),
  finishedBefore: z.coerce.number().pipe(epochMs).optional().meta({ description: "Finished strictly before this time: only finished jobs match." }),
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
