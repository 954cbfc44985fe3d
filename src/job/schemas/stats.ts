/**
 * Counts: by state across the queue, per object (the busiest scopes), per type with its pause state,
 * and pausing a type (docs/http-api.md, The HTTP API; docs/operating.md).
 *
 * @module
 */
import { z } from "zod";
import { FAILURE_KINDS } from "../states";
import { JobTypeName, ScopeSchema } from "./pieces";

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
    waiting: z.number().int().meta({ description: "Jobs waiting for a signal or a wait token (docs/workflows.md): no call, lease, permit or attempt held." }),
    expired: z.number().int().meta({ description: "Jobs not started before their expiry (`expiresAt`, `expiresInMs`, the type's `expireAfterMs`): they never ran." }),
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

export const ScopesQuerySchema = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50) });
export const ScopeStatsSchema = StatsSchema.extend({
  home: z.string().meta({ description: "The object's name: `scope:<type>:<id>`, or `type:<jobType>:<shard>` for unscoped jobs." }),
  scope: ScopeSchema.nullable(),
});
export type ScopeStats = z.infer<typeof ScopeStatsSchema>;
export const ScopesResultSchema = z.object({ items: z.array(ScopeStatsSchema) });

export const TypeParams = z.strictObject({ type: JobTypeName });
export const PauseResultSchema = z.object({
  type: z.string(),
  paused: z.boolean(),
  unreached: z
    .number()
    .int()
    .meta({ description: "Objects holding the type that could not be told now (logged as pause:notice_failed); each learns the change when it next asks, within 30 minutes. Sending the call again is safe." }),
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
