/**
 * Concurrency and rate limits, keyed or not (docs/guards.md "Keyed limits"): the config's shapes, what they
 * resolve to, and the startup checks that span them. A limit with a `key` holds for each value of the key on
 * its own — `concurrency = { limit = 2, key = "payload.tenant" }` runs at most 2 jobs of each tenant at once —
 * in one pool object per key value (pool/pool-name.ts).
 *
 * @module
 */
import { z } from "zod";
import { KeyPathSchema, type KeyPath } from "../job/limit-key";
import type { QueueConfig } from "./schema";

/** A rate: at most `limit` starts per `periodMs`, spaced by GCRA; `burst` of them may start at once (pool/rate.ts). */
export const RateSchema = z.strictObject({
  limit: z.number().int().min(1).max(10_000_000),
  periodMs: z.number().int().min(1).max(7 * 24 * 3600 * 1000),
  /** Starts allowed at once, above the even spacing (default 1: never more than `limit` in any `periodMs`). */
  burst: z.number().int().min(1).max(10_000_000).optional(),
  key: KeyPathSchema.optional(),
});

/** A type's `concurrency`: a number, or `{ limit, key? }`. */
export const ConcurrencySchema = z.union([z.number().int().min(1).max(100_000), z.strictObject({ limit: z.number().int().min(1).max(100_000), key: KeyPathSchema.optional() })]);

export interface RateSettings {
  limit: number;
  periodMs: number;
  burst: number;
}

/** What a type's own limits resolve to. `key`: the path all of its keyed limits count under (one per type). */
export interface TypeLimits {
  concurrency: number | null;
  /** The type's `concurrency` is per key value. */
  concurrencyKeyed: boolean;
  rate: RateSettings | null;
  rateKeyed: boolean;
}

export function resolveTypeLimits(t: { concurrency?: z.infer<typeof ConcurrencySchema>; rate?: z.infer<typeof RateSchema> }): TypeLimits & { keys: KeyPath[] } {
  const c = t.concurrency;
  const concurrency = c === undefined ? null : typeof c === "number" ? c : c.limit;
  const concurrencyKey = typeof c === "object" ? (c.key ?? null) : null;
  const rate = t.rate ? { limit: t.rate.limit, periodMs: t.rate.periodMs, burst: t.rate.burst ?? 1 } : null;
  const rateKey = t.rate?.key ?? null;
  return {
    concurrency,
    concurrencyKeyed: concurrencyKey !== null,
    rate,
    rateKeyed: rateKey !== null,
    keys: [concurrencyKey, rateKey].filter((k): k is KeyPath => k !== null),
  };
}

interface LimitsInput {
  types?: Record<string, { concurrency?: z.infer<typeof ConcurrencySchema>; rate?: z.infer<typeof RateSchema>; batch?: { key?: string } }>;
  pools?: Record<string, { key?: string; types: string[] }>;
}

/**
 * checkLimitKeys: every keyed limit a type is under — its own and those of its keyed pools — and its batch's key
 * count it under one key, so that a job has one key value and is claimed with the others of it (docs/guards.md "Keyed limits").
 */
export function checkLimitKeys(config: LimitsInput, ctx: z.RefinementCtx): void {
  const keyOf = new Map<string, { key: string; path: (string | number)[] }>();
  const claim = (type: string, key: string, path: (string | number)[]) => {
    const first = keyOf.get(type);
    if (!first) {
      keyOf.set(type, { key, path });
      return;
    }
    if (first.key !== key) {
      ctx.addIssue({
        code: "custom",
        path,
        message: `"${key}" differs from "${first.key}" (${first.path.join(".")}): the keyed limits of ${JSON.stringify(type)} must share one key`,
      });
    }
  };
  for (const [name, t] of Object.entries(config.types ?? {})) {
    if (typeof t.concurrency === "object" && t.concurrency.key) claim(name, t.concurrency.key, ["types", name, "concurrency", "key"]);
    if (t.rate?.key) claim(name, t.rate.key, ["types", name, "rate", "key"]);
    // A batch's key groups the jobs of a call (docs/handlers.md "Batch handlers"): the same one value per job.
    if (t.batch?.key) claim(name, t.batch.key, ["types", name, "batch", "key"]);
  }
  for (const [pool, p] of Object.entries(config.pools ?? {})) {
    if (p.key) for (const type of p.types) claim(type, p.key, ["pools", pool, "key"]);
  }
}

/** keyedType: the type is under a keyed limit, so its jobs are claimed key by key (scope/jobs/keyed-claim.ts). */
export function keyedType(config: QueueConfig, type: string): boolean {
  return config.typeSettings(type).limitKey !== null;
}
