/**
 * What each declared job type resolves to (src/config/schema.ts parses the config; this fills every setting a type
 * left out from the defaults): the settings the queue reads through `config.typeSettings(type)`.
 *
 * @module
 */
import { BACKOFF_DEFAULT, type Backoff } from "../job/backoff";
import type { KeyPath } from "../job/limit-key";
import { resolveTypeLimits, type RateSettings } from "./limits";
import type { ConfigInput } from "./schema";

export interface TypeSettings {
  shards: number;
  maxAttempts: number;
  backoff: Backoff;
  /** Push types only. */
  binding: string | null;
  concurrency: number | null;
  /** `concurrency` holds per value of limitKey. */
  concurrencyKeyed: boolean;
  /** The type's own rate (GCRA), or null. */
  rate: RateSettings | null;
  rateKeyed: boolean;
  /** The key path of every keyed limit the type is under — its own and its keyed pools' — or null (config/limits.ts). */
  limitKey: KeyPath | null;
  timeoutMs: number | null;
  /** How long after it is due a job not yet started expires (docs/guards.md "Expiry before start"), or null. */
  expireAfterMs: number | null;
  batchSize: number;
  /** A batch handler's gathering (docs/handlers.md "Batch handlers"), or null; its maxSize is the type's batchSize. */
  batch: { maxSize: number; maxWaitMs: number } | null;
  leaseMs: number;
  serializeByScope: boolean;
  /** One at a time per object, in enqueue order (claim.ts, orderedHead). */
  ordered: boolean;
  /** Its values are shown redacted to everyone but its handler (docs/operating.md "Sensitive values"). */
  sensitive: boolean;
  /** Most pending jobs of the type per scope object, or null (no cap). */
  maxDepth: number | null;
  notWhileRunning: string[];
  waitsFor: string[];
  /** The failure handler's type (docs/workflows.md "Failure handlers"), or null. */
  onFailure: string | null;
  /** Declared pools this type draws on. */
  pools: string[];
}

/** The built-in defaults resolveTypes falls back on (schema.ts DEFAULTS). */
interface TypeDefaults {
  maxAttempts: number;
  batchSize: number;
  leaseMs: number;
}

/** resolveTypes: each declared type's settings, and `base` — an undeclared type's (the defaults alone). */
export function resolveTypes(input: ConfigInput, defaults: TypeDefaults): { types: Record<string, TypeSettings>; base: TypeSettings } {
  const base: TypeSettings = {
    shards: 1,
    maxAttempts: input.defaults?.maxAttempts ?? defaults.maxAttempts,
    backoff: {
      kind: input.defaults?.backoff?.kind ?? "exponential",
      baseMs: input.defaults?.backoff?.baseMs ?? BACKOFF_DEFAULT.baseMs,
      maxMs: input.defaults?.backoff?.maxMs ?? BACKOFF_DEFAULT.maxMs,
    },
    binding: null,
    concurrency: null,
    concurrencyKeyed: false,
    rate: null,
    rateKeyed: false,
    limitKey: null,
    timeoutMs: null,
    expireAfterMs: null,
    batchSize: defaults.batchSize,
    batch: null,
    leaseMs: defaults.leaseMs,
    serializeByScope: false,
    ordered: false,
    sensitive: false,
    maxDepth: null,
    notWhileRunning: [],
    waitsFor: [],
    onFailure: null,
    pools: [],
  };
  const types: Record<string, TypeSettings> = {};
  for (const [name, t] of Object.entries(input.types ?? {})) {
    const { keys, ...limits } = resolveTypeLimits(t);
    const poolKey = Object.values(input.pools ?? {}).find((p) => p.key !== undefined && p.types.includes(name))?.key;
    types[name] = {
      shards: t.shards ?? base.shards,
      maxAttempts: t.maxAttempts ?? base.maxAttempts,
      backoff: { kind: t.backoff?.kind ?? base.backoff.kind, baseMs: t.backoff?.baseMs ?? base.backoff.baseMs, maxMs: t.backoff?.maxMs ?? base.backoff.maxMs },
      binding: t.binding ?? null,
      ...limits,
      // One key per type (checkLimitKeys refused two).
      limitKey: keys[0] ?? poolKey ?? t.batch?.key ?? null,
      timeoutMs: t.timeoutMs ?? null,
      expireAfterMs: t.expireAfterMs ?? null,
      batchSize: t.batch?.maxSize ?? t.batchSize ?? base.batchSize,
      batch: t.batch ? { maxSize: t.batch.maxSize, maxWaitMs: t.batch.maxWaitMs ?? 0 } : null,
      leaseMs: t.leaseMs ?? base.leaseMs,
      serializeByScope: t.serializeByScope ?? false,
      ordered: t.ordered ?? false,
      sensitive: t.sensitive ?? false,
      maxDepth: t.maxDepth ?? null,
      notWhileRunning: t.notWhileRunning ?? [],
      waitsFor: t.waitsFor ?? [],
      onFailure: t.onFailure ?? null,
      pools: Object.entries(input.pools ?? {})
        .filter(([, p]) => p.types.includes(name))
        .map(([pool]) => pool)
        .sort(),
    };
  }
  return { types, base };
}
