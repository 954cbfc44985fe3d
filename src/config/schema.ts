/**
 * The declarative queue config (DESIGN.md §5), read from the `EDGEQUEUE_CONFIG`
 * var in wrangler.toml and validated when the Worker starts. Unknown keys are
 * refused so that a typo (`maxAttempt`) fails loudly instead of being ignored.
 *
 * @module
 */
import { z } from "zod";
import { BACKOFF_DEFAULT } from "../job/backoff";

const ms = (max: number) => z.number().int().min(0).max(max);
const DAY_MS = 24 * 3600 * 1000;

const BackoffSchema = z.strictObject({
  baseMs: ms(DAY_MS).optional(),
  maxMs: ms(7 * DAY_MS).optional(),
});

const TypeConfigSchema = z.strictObject({
  /** Objects holding this type's unscoped jobs. Raise it for a hot type; keep it fixed once jobs exist. */
  shards: z.number().int().min(1).max(256).optional(),
  maxAttempts: z.number().int().min(1).max(1000).optional(),
  backoff: BackoffSchema.optional(),
});

export const ConfigSchema = z.strictObject({
  defaults: z
    .strictObject({
      maxAttempts: z.number().int().min(1).max(1000).optional(),
      backoff: BackoffSchema.optional(),
    })
    .optional(),
  types: z.record(z.string().min(1).max(128), TypeConfigSchema).optional(),
  limits: z
    .strictObject({
      /** Largest payload (and result), as UTF-8 JSON bytes. */
      payloadMaxBytes: z.number().int().min(1024).max(1024 * 1024).optional(),
      /** Largest sum of payloads in one batch enqueue: the reply must fit a 32 MiB RPC. */
      batchPayloadMaxBytes: z.number().int().min(1024).max(16 * 1024 * 1024).optional(),
    })
    .optional(),
  retention: z
    .strictObject({
      completedMs: ms(365 * DAY_MS).optional(),
      failedMs: ms(365 * DAY_MS).optional(),
      cancelledMs: ms(365 * DAY_MS).optional(),
    })
    .optional(),
});
export type ConfigInput = z.infer<typeof ConfigSchema>;

export interface TypeSettings {
  shards: number;
  maxAttempts: number;
  backoff: { baseMs: number; maxMs: number };
}

/** The config with every default filled in. */
export interface QueueConfig {
  types: Readonly<Record<string, TypeSettings>>;
  limits: { payloadMaxBytes: number; batchPayloadMaxBytes: number };
  retention: { completedMs: number; failedMs: number; cancelledMs: number };
  /** Settings for any type, declared or not. */
  typeSettings(type: string): TypeSettings;
}

export const DEFAULTS = {
  maxAttempts: 3,
  payloadMaxBytes: 128 * 1024,
  batchPayloadMaxBytes: 8 * 1024 * 1024,
  retention: { completedMs: DAY_MS, failedMs: 7 * DAY_MS, cancelledMs: DAY_MS },
} as const;

export function resolveConfig(input: ConfigInput): QueueConfig {
  const base: TypeSettings = {
    shards: 1,
    maxAttempts: input.defaults?.maxAttempts ?? DEFAULTS.maxAttempts,
    backoff: {
      baseMs: input.defaults?.backoff?.baseMs ?? BACKOFF_DEFAULT.baseMs,
      maxMs: input.defaults?.backoff?.maxMs ?? BACKOFF_DEFAULT.maxMs,
    },
  };
  const types: Record<string, TypeSettings> = {};
  for (const [name, t] of Object.entries(input.types ?? {})) {
    types[name] = {
      shards: t.shards ?? base.shards,
      maxAttempts: t.maxAttempts ?? base.maxAttempts,
      backoff: { baseMs: t.backoff?.baseMs ?? base.backoff.baseMs, maxMs: t.backoff?.maxMs ?? base.backoff.maxMs },
    };
  }
  return {
    types,
    limits: {
      payloadMaxBytes: input.limits?.payloadMaxBytes ?? DEFAULTS.payloadMaxBytes,
      batchPayloadMaxBytes: input.limits?.batchPayloadMaxBytes ?? DEFAULTS.batchPayloadMaxBytes,
    },
    retention: { ...DEFAULTS.retention, ...input.retention },
    typeSettings: (type) => (Object.hasOwn(types, type) ? types[type]! : base),
  };
}
