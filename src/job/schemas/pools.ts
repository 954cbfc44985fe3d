/**
 * Pools as the API shows them, and resizing one at runtime (docs/guards.md).
 *
 * @module
 */
import { z } from "zod";
import { wellFormed } from "../names";
import { ScopeSchema } from "./pieces";

export const PoolNameParams = z.strictObject({ name: wellFormed(z.string().min(1).max(200)) });
export const PoolLimitsSchema = z
  .strictObject({
    concurrency: z.number().int().min(1).max(100_000).nullable().optional().meta({ description: "Most cost units running at once; null returns to the configured value." }),
    ratePerMinute: z.number().int().min(1).max(10_000_000).nullable().optional().meta({ description: "Most rate units spent per one-minute window; null returns to the configured value." }),
    key: wellFormed(z.string().min(1).max(256))
      .optional()
      .meta({ description: "A keyed pool: the key value whose own limit this sets (docs/guards.md \"Keyed limits\"); the others keep theirs." }),
  })
  .refine((b) => b.concurrency !== undefined || b.ratePerMinute !== undefined, { message: "give concurrency, ratePerMinute, or both" });
export type PoolLimitsRequest = z.infer<typeof PoolLimitsSchema>;

const Rate = z.object({ limit: z.number().int(), periodMs: z.number().int(), burst: z.number().int() }).meta({ description: "At most `limit` starts per `periodMs`, spaced evenly (GCRA), `burst` of them at once." });
const Limits = z.object({ concurrency: z.number().int().nullable(), ratePerMinute: z.number().int().nullable(), rate: Rate.nullable() });
const KeyStatus = z.object({ key: z.string(), active: z.number().int().meta({ description: "Summed cost of its live permits." }), waiting: z.number().int().meta({ description: "Holders waiting for it." }), at: z.number().meta({ description: "When its object last reported (up to a second behind while busy)." }) });
/** A keyed limit's key values (docs/guards.md "Keyed limits"), busiest first. */
export const PoolKeysSchema = z.object({
  keys: z.array(KeyStatus),
  next: z.string().nullable().meta({ description: "The cursor of the next page (GET /v1/pools/{name}/keys?cursor=), or null." }),
  total: z.object({ keys: z.number().int().meta({ description: "Key values holding permits or with waiters." }), active: z.number().int() }),
});
export type PoolKeysBody = z.infer<typeof PoolKeysSchema>;
export const PoolKeysQuerySchema = z.strictObject({
  cursor: z.string().max(1200).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export const PoolStatusSchema = z.object({
  name: z.string().meta({ description: "A declared pool's name, or `type:<jobType>` for a type's concurrency." }),
  types: z.array(z.string()),
  configured: Limits,
  limits: Limits.meta({ description: "In force: the configured limits, or those set with PUT." }),
  active: z.number().int().meta({ description: "Summed cost of live permits." }),
  permits: z.number().int(),
  window: z.object({ start: z.number().nullable(), spent: z.number().int() }).meta({ description: "The current rate window." }),
  waiting: z.array(z.object({ holder: z.string(), scope: ScopeSchema.nullable(), type: z.string(), since: z.number(), reservedUntil: z.number().nullable() })),
  keyed: z
    .object({
      path: z.string().meta({ description: "What the key is read from: payload.<field>, scope.id, scope.type or concurrencyKey." }),
      configured: Limits.meta({ description: "Each key value's own limits, from the config (PUT with `key` sets one value's)." }),
      busiest: PoolKeysSchema.meta({ description: "The busiest key values (the first 10; GET /v1/pools/{name}/keys pages through all)." }),
    })
    .nullable()
    .meta({ description: "A keyed limit (docs/guards.md \"Keyed limits\"): each key value has the limits of its own; the fields above are the limit's unkeyed part, if any." }),
});
export type PoolStatusBody = z.infer<typeof PoolStatusSchema>;
export const PoolListSchema = z.object({ pools: z.array(PoolStatusSchema) });
