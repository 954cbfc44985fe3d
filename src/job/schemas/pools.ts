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
