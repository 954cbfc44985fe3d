/**
 * The declarative queue config (DESIGN.md §5), read from the `EDGEQUEUE_CONFIG`
 * var in wrangler.toml and validated when the Worker starts. Unknown keys are
 * refused so that a typo (`maxAttempt`) fails loudly instead of being ignored.
 *
 * @module
 */
import { JURISDICTIONS, type Jurisdiction } from "./residency";
import { BudgetSchema, budgetSettings, type BudgetSettings } from "./budgets";
import { z } from "zod";
import { PAYLOAD_MAX_BYTES_DEFAULT } from "../job/json-size";
import { MaxAttemptsSchema } from "../job/max-attempts";
import { wellFormed } from "../job/names";
import { ScheduleNameSchema, ScheduleSpecSchema, type ScheduleSpec } from "../job/schedule-spec";
import type { KeyPath } from "../job/limit-key";
import { KeyPathSchema } from "../job/limit-key";
import { ConcurrencySchema, RateSchema, type RateSettings } from "./limits";
import { resolveTypes, type TypeSettings } from "./type-settings";
import { checkRelations, relationWarnings } from "./relations";

const ms = (max: number) => z.number().int().min(0).max(max);

/**
 * `catalog.shards`: its default and its bound. Kept with the setting, not in catalog/shards.ts: the
 * catalog reads the config, and the config must not import the catalog (scripts/check-cycles.mjs).
 */
export const CATALOG_SHARDS_DEFAULT = 4;
export const CATALOG_SHARDS_MAX = 256;
const DAY_MS = 24 * 3600 * 1000;
/** A job type the config names: well-formed Unicode, as the API takes them (docs/http-api.md "Semantics worth knowing", Names). */
const typeRef = wellFormed(z.string().min(1));
export const LOG_LEVELS = ["operator", "all", "none"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A retention: milliseconds, or null / "forever" to keep terminal jobs until pruned. */
const keepFor = z.union([ms(365 * DAY_MS), z.null(), z.literal("forever")]);

function keptFor(v: number | null | "forever" | undefined, otherwise: number): number | null {
  if (v === undefined) return otherwise;
  return v === null || v === "forever" ? null : v;
}

const BackoffSchema = z.strictObject({
  /** exponential (full jitter, the default) or fixed (baseMs every time). */
  kind: z.enum(["exponential", "fixed"]).optional(),
  baseMs: ms(DAY_MS).optional(),
  maxMs: ms(7 * DAY_MS).optional(),
});

const bindingName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a binding name from wrangler.toml (letters, digits, _)");

const TypeConfigSchema = z.strictObject({
  /** Objects holding this type's unscoped jobs. Raise it for a hot type; keep it fixed once jobs exist. */
  shards: z.number().int().min(1).max(256).optional(),
  maxAttempts: MaxAttemptsSchema.optional(),
  backoff: BackoffSchema.optional(),
  /** A service binding to the handler Worker's entrypoint: jobs are pushed to it. Without one the type is pull-only. */
  binding: bindingName.optional(),
  /**
   * Most attempts of this type running at once, across every object (a PoolDO permit each); `{ limit, key }`: that
   * many per value of the key (docs/guards.md "Keyed limits").
   */
  concurrency: ConcurrencySchema.optional(),
  /** Most starts per period, spaced evenly (GCRA), per value of `key` when given (docs/guards.md "Rate limits"). */
  rate: RateSchema.optional(),
  /** Default per-attempt time limit for jobs of this type (an enqueue may set its own). */
  timeoutMs: z.number().int().min(1000).max(7 * DAY_MS).optional(),
  /**
   * A job of this type not started within this long of becoming due ends `expired` and never runs (docs/guards.md
   * "Expiry before start"); an enqueue's `expiresAt` or `expiresInMs` takes its place.
   */
  expireAfterMs: z.number().int().min(1).max(366 * DAY_MS).optional(),
  /** Most jobs per handler call. */
  batchSize: z.number().int().min(1).max(100).optional(),
  /**
   * A batch handler's type (docs/handlers.md "Batch handlers"): up to `maxSize` due jobs in one call of the
   * handler's function, gathered for at most `maxWaitMs` (default 0: what is due goes at once).
   */
  batch: z
    .strictObject({
      maxSize: z.number().int().min(1).max(100),
      maxWaitMs: z.number().int().min(0).max(60_000).optional(),
      /** The jobs of one call share this key's value (a job path, as a keyed limit's key). */
      key: KeyPathSchema.optional(),
    })
    .optional(),
  /** Lease of a pushed attempt, renewed every third of it while the call is in flight. */
  leaseMs: z.number().int().min(1000).max(3600_000).optional(),
  /** Most pending jobs (due or delayed) of this type one scope object holds: an enqueue past it is refused (429 queue_full). */
  maxDepth: z.number().int().min(1).max(10_000_000).optional(),
  /** At most one job of this type running per scope (jobs without a scope are unaffected). */
  serializeByScope: z.boolean().optional(),
  /**
   * FIFO: in each object, one job of this type at a time, in enqueue order; the oldest live job (running, or
   * pending and backing off) holds the rest until it ends. Needs `shards = 1`. An event consumer's deliveries
   * then run in event order.
   */
  ordered: z.boolean().optional(),
  /**
   * Its values — payloads, results, step values, signal data, progress, log lines — are never shown: listings, the
   * dashboard, subscriptions, callbacks and lifecycle events read `"[redacted]"`; only its handler gets them
   * (docs/operating.md "Sensitive values").
   */
  sensitive: z.boolean().optional(),
  /** Never start while a job of one of these types is running. Declare it on both sides. */
  notWhileRunning: z.array(typeRef).optional(),
  /** Do not start while these types have due or running work. Cycles are refused. */
  waitsFor: z.array(typeRef).optional(),
  /**
   * A declared type: each job of this type that fails (any failure kind) enqueues one job of it, in the same scope,
   * with payload `{"job": <the failed job's view>}` (docs/workflows.md "Failure handlers"). A failed failure handler
   * triggers none.
   */
  onFailure: typeRef.optional(),
});

const PoolConfigSchema = z.strictObject({
  /** Most cost units running at once (each member attempt holds its type's cost, default 1). */
  concurrency: z.number().int().min(1).max(100_000).optional(),
  /** Most budget units spent per fixed one-minute window (each attempt start spends its type's rate cost, default 1). */
  ratePerMinute: z.number().int().min(1).max(10_000_000).optional(),
  /** Most budget units spent per period, spaced evenly (GCRA; docs/guards.md "Rate limits"); instead of ratePerMinute. */
  rate: RateSchema.omit({ key: true }).optional(),
  /** Each value of this key gets the pool's limits of its own (docs/guards.md "Keyed limits"). */
  key: KeyPathSchema.optional(),
  types: z.array(typeRef).min(1),
  costs: z.record(z.string(), z.number().int().min(1).max(100_000)).optional(),
  rateCosts: z.record(z.string(), z.number().int().min(1).max(10_000_000)).optional(),
});

export const ConfigSchema = z.strictObject({
  /** true: an enqueue, claim or schedule naming a type not declared under `types` is refused (400, naming the nearest declared ones). */
  strictTypes: z.boolean().optional(),
  /**
   * The catalog's shards (catalog/shards.ts): each busy scope object reports to one, about once a second.
   * Keep it fixed once jobs exist: a home that hashes to another shard is listed twice until pruned.
   */
  catalog: z.strictObject({ shards: z.number().int().min(1).max(CATALOG_SHARDS_MAX).optional() }).optional(),
  /** A service binding whose `observe(events)` receives every lifecycle event. */
  observer: bindingName.optional(),
  /** Data residency (src/residency.ts; docs/operating.md "Data residency"). */
  residency: z
    .strictObject({
      /** Every object of the queue lives in it. */
      jurisdiction: z.enum(JURISDICTIONS).optional(),
      /** A scope type's scope objects live in its jurisdiction. */
      scopeTypes: z.record(z.string().min(1).max(128), z.enum(JURISDICTIONS)).optional(),
    })
    .optional(),
  /** Spend caps (config/budgets.ts; docs/operating.md "Spend caps"): by name. */
  budgets: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "budget names are 1-64 characters of A-Z a-z 0-9 _ . -"), BudgetSchema).optional(),
  /** A Workers Analytics Engine dataset binding: every transition also writes a data point (metrics/analytics.ts). */
  analytics: bindingName.optional(),
  dashboard: z
    .strictObject({
      /** false: no dashboard at all (/dashboard answers 404); the API and metrics stay. */
      enabled: z.boolean().optional(),
      /** The overview highlights a type whose oldest due job has waited longer than this (ms). */
      lagAlertMs: z.number().int().min(1000).max(7 * 86_400_000).optional(),
    })
    .optional(),
  /**
   * Lifecycle log lines: "operator" (default) writes the lines an operator acts on — job:failed,
   * job:retry_scheduled (stalls included) and job:lease_lost; "all" every transition; "none" (or false) none. true means "all".
   */
  events: z.strictObject({ log: z.union([z.enum(LOG_LEVELS), z.boolean()]).optional() }).optional(),
  defaults: z
    .strictObject({
      maxAttempts: MaxAttemptsSchema.optional(),
      backoff: BackoffSchema.optional(),
    })
    .optional(),
  types: z.record(wellFormed(z.string().min(1).max(128)), TypeConfigSchema).optional(),
  /** Schedules kept in sync with the schedule object whenever it starts (the API cannot change these). */
  schedules: z.record(ScheduleNameSchema, ScheduleSpecSchema).optional(),
  /** Event topics: each event becomes one delivery job per consumer (a pushed job type). */
  topics: z.record(z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "topic names are 1-128 characters of A-Z a-z 0-9 . _ : -"), z.strictObject({ consumers: z.array(typeRef) })).optional(),
  /** Shared budgets across types: a third-party API's concurrency and/or rate. */
  pools: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "pool names are 1-64 characters of A-Z a-z 0-9 _ . -"), PoolConfigSchema).optional(),
  limits: z
    .strictObject({
      /** Largest payload (and result), as UTF-8 JSON bytes. */
      payloadMaxBytes: z.number().int().min(1024).max(1024 * 1024).optional(),
      /** Largest sum of payloads in one batch enqueue: the reply must fit a 32 MiB RPC. */
      batchPayloadMaxBytes: z.number().int().min(1024).max(16 * 1024 * 1024).optional(),
      /** Largest journal of durable steps per job (names and results, UTF-8 bytes); each step result is also held to payloadMaxBytes. */
      journalMaxBytes: z.number().int().min(1024).max(16 * 1024 * 1024).optional(),
      /**
       * Live subscriptions (WebSockets and event streams) one scope object holds at once; the next is refused 429
       * (docs/http-api.md "Live subscriptions"). The platform holds at most 32,768 hibernated WebSockets per object.
       */
      subscribersPerObject: z.number().int().min(1).max(32_000).optional(),
    })
    .optional(),
  /** Signals and wait-token completions that reach a job before it waits for them (docs/workflows.md). */
  signals: z
    .strictObject({
      /** How long such a signal is kept for the job's next wait of its name (default 24 h). */
      retainMs: z.number().int().min(1000).max(365 * DAY_MS).optional(),
    })
    .optional(),
  /** Completion callbacks (docs/http-api.md "Completion callbacks", "Where a callback may go"). */
  callbacks: z
    .strictObject({
      /**
       * Hosts a callback may reach though they are loopback, private or local (`127.0.0.1`, `localhost:8788`,
       * `[::1]`): for local development and tests. Production needs none.
       */
      allowHosts: z.array(z.string().min(1).max(260).regex(/^[^\s/?#@]+$/, "a host or host:port, no scheme or path")).max(64).optional(),
    })
    .optional(),
  /**
   * The queue Worker's public origin (`https://queue.example.com`): a wait token's `url` is its path there. Without
   * it a token has only its `path`.
   */
  publicUrl: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), "publicUrl must be an http(s) URL")
    .transform((u) => u.replace(/\/+$/, ""))
    .optional(),
  /**
   * OpenTelemetry export (docs/operating.md "OpenTelemetry"): spans of jobs that carry a trace context (or of every
   * job, with traceAll) go over OTLP/HTTP (JSON) to `endpoint` + `/v1/traces`. Without an endpoint here, the
   * OTEL_EXPORTER_OTLP_ENDPOINT var names it (OTEL_EXPORTER_OTLP_HEADERS its headers); neither: nothing is exported.
   */
  otel: z
    .strictObject({
      endpoint: z
        .string()
        .url()
        .refine((u) => /^https?:\/\//.test(u), "otel.endpoint must be an http(s) URL")
        .optional(),
      headers: z.record(z.string(), z.string()).optional(),
      traceAll: z.boolean().optional(),
      serviceName: z.string().min(1).max(128).optional(),
    })
    .optional(),
  /** How long terminal jobs are kept; null (JSON) or "forever" (TOML has no null) keeps them until pruned by hand. */
  retention: z
    .strictObject({
      completedMs: keepFor.optional(),
      failedMs: keepFor.optional(),
      cancelledMs: keepFor.optional(),
      /** How long a deleted job's id still answers an enqueue as a duplicate (0: not at all). */
      idempotencyMs: ms(365 * DAY_MS).optional(),
      /** How long the audit list keeps an operator action (docs/operating.md "Tokens and roles"; default 90 days). */
      auditMs: z.number().int().min(3600_000).max(3650 * DAY_MS).optional(),
    })
    .optional(),
}).superRefine(checkRelations);
export type ConfigInput = z.infer<typeof ConfigSchema>;
/** What a person writes (defineConfig, createQueue): before the schema's transforms (`maxAttempts: "unlimited"`). */
export type QueueConfigInput = z.input<typeof ConfigSchema>;

export interface PoolSettings {
  name: string;
  concurrency: number | null;
  ratePerMinute: number | null;
  rate: RateSettings | null;
  /** Each value of the key gets these limits of its own, or null. */
  key: KeyPath | null;
  types: string[];
  /** Per-type costs, default 1. */
  costs: Record<string, number>;
  rateCosts: Record<string, number>;
}

/** The config with every default filled in. */
export interface QueueConfig {
  types: Readonly<Record<string, TypeSettings>>;
  /** Types with a handler binding: dispatched, never pulled. */
  pushTypes: readonly string[];
  /** Types some type's waitsFor names: their new work is reported to the catalog at once. */
  waitedOn: readonly string[];
  /** Types marked `sensitive`: their values are shown redacted (sealing/lens.ts). */
  sensitiveTypes: readonly string[];
  observer: string | null;
  analytics: string | null;
  /** Which lifecycle events get a JSON log line (scope/watching/events.ts). */
  logEvents: LogLevel;
  dashboard: { enabled: boolean; lagAlertMs: number };
  /** How many CatalogDO objects share the homes' summaries (catalog/shards.ts). */
  catalogShards: number;
  pools: Readonly<Record<string, PoolSettings>>;
  /** topic → its consumer types. */
  topics: Readonly<Record<string, string[]>>;
  schedules: Readonly<Record<string, ScheduleSpec>>;
  /** Things that are allowed but probably a mistake (a one-sided notWhileRunning); logged at startup. */
  warnings: string[];
  limits: { payloadMaxBytes: number; batchPayloadMaxBytes: number; journalMaxBytes: number; subscribersPerObject: number };
  /** How long a signal that reached a job before its wait is kept (docs/workflows.md). */
  signals: { retainMs: number };
  /** OpenTelemetry export (scope/watching/tracing.ts): the config's part; the env's OTEL_ vars fill in a missing endpoint. */
  otel: { endpoint: string | null; headers: Record<string, string>; traceAll: boolean; serviceName: string };
  /** Completion callbacks: hosts let through though private (job/callback-url.ts). */
  callbacks: { allowHosts: readonly string[] };
  /** The queue's public origin, no trailing slash (wait tokens' `url`), or null. */
  publicUrl: string | null;
  /** Per terminal state, how long a job is kept; null: forever (only prune deletes it). */
  retention: { completedMs: number | null; failedMs: number | null; cancelledMs: number | null; idempotencyMs: number; auditMs: number };
  /** Undeclared type names are refused (config/known-types.ts). */
  strictTypes: boolean;
  /** Data residency (src/residency.ts): the queue's jurisdiction, and each scope type's own. */
  residency: { jurisdiction: Jurisdiction | null; scopeTypes: Readonly<Record<string, Jurisdiction>> };
  /** Spend caps (config/budgets.ts), in the order the config names them. */
  budgets: readonly BudgetSettings[];
  /** Settings for any type, declared or not. */
  typeSettings(type: string): TypeSettings;
}


function logLevel(v: LogLevel | boolean | undefined): LogLevel {
  if (v === undefined) return "operator";
  if (v === true) return "all";
  if (v === false) return "none";
  return v;
}

export const DEFAULTS = {
  maxAttempts: 3,
  /** Most jobs per handler call; fewer go when fewer are due (dispatch/dispatcher.ts, batchFor). */
  batchSize: 100,
  leaseMs: 30_000,
  payloadMaxBytes: PAYLOAD_MAX_BYTES_DEFAULT,
  batchPayloadMaxBytes: 8 * 1024 * 1024,
  journalMaxBytes: 1024 * 1024,
  subscribersPerObject: 5_000,
  retention: { completedMs: DAY_MS, failedMs: 7 * DAY_MS, cancelledMs: DAY_MS, idempotencyMs: 7 * DAY_MS, auditMs: 90 * DAY_MS },
  lagAlertMs: 60_000,
  signalRetainMs: DAY_MS,
} as const;

export function resolveConfig(input: ConfigInput): QueueConfig {
  const { types, base } = resolveTypes(input, DEFAULTS);
  const pools: Record<string, PoolSettings> = {};
  for (const [name, p] of Object.entries(input.pools ?? {})) {
    pools[name] = {
      name,
      concurrency: p.concurrency ?? null,
      ratePerMinute: p.ratePerMinute ?? null,
      rate: p.rate ? { limit: p.rate.limit, periodMs: p.rate.periodMs, burst: p.rate.burst ?? 1 } : null,
      key: p.key ?? null,
      types: p.types,
      costs: p.costs ?? {},
      rateCosts: p.rateCosts ?? {},
    };
  }
  return {
    types,
    pushTypes: Object.keys(types).filter((t) => types[t]!.binding !== null),
    waitedOn: [...new Set(Object.values(types).flatMap((t) => t.waitsFor))],
    sensitiveTypes: Object.keys(types).filter((t) => types[t]!.sensitive),
    observer: input.observer ?? null,
    analytics: input.analytics ?? null,
    dashboard: { enabled: input.dashboard?.enabled ?? true, lagAlertMs: input.dashboard?.lagAlertMs ?? DEFAULTS.lagAlertMs },
    catalogShards: input.catalog?.shards ?? CATALOG_SHARDS_DEFAULT,
    logEvents: logLevel(input.events?.log),
    pools,
    topics: Object.fromEntries(Object.entries(input.topics ?? {}).map(([t, v]) => [t, v.consumers])),
    schedules: input.schedules ?? {},
    warnings: relationWarnings(input),
    limits: {
      payloadMaxBytes: input.limits?.payloadMaxBytes ?? DEFAULTS.payloadMaxBytes,
      batchPayloadMaxBytes: input.limits?.batchPayloadMaxBytes ?? DEFAULTS.batchPayloadMaxBytes,
      journalMaxBytes: input.limits?.journalMaxBytes ?? DEFAULTS.journalMaxBytes,
      subscribersPerObject: input.limits?.subscribersPerObject ?? DEFAULTS.subscribersPerObject,
    },
    signals: { retainMs: input.signals?.retainMs ?? DEFAULTS.signalRetainMs },
    publicUrl: input.publicUrl ?? null,
    budgets: budgetSettings(input.budgets),
    residency: { jurisdiction: input.residency?.jurisdiction ?? null, scopeTypes: input.residency?.scopeTypes ?? {} },
    callbacks: { allowHosts: input.callbacks?.allowHosts ?? [] },
    otel: { endpoint: input.otel?.endpoint ?? null, headers: input.otel?.headers ?? {}, traceAll: input.otel?.traceAll ?? false, serviceName: input.otel?.serviceName ?? "edgequeue" },
    retention: {
      completedMs: keptFor(input.retention?.completedMs, DEFAULTS.retention.completedMs),
      failedMs: keptFor(input.retention?.failedMs, DEFAULTS.retention.failedMs),
      cancelledMs: keptFor(input.retention?.cancelledMs, DEFAULTS.retention.cancelledMs),
      idempotencyMs: input.retention?.idempotencyMs ?? DEFAULTS.retention.idempotencyMs,
      auditMs: input.retention?.auditMs ?? DEFAULTS.retention.auditMs,
    },
    strictTypes: input.strictTypes ?? false,
    typeSettings: (type) => (Object.hasOwn(types, type) ? types[type]! : base),
  };
}
