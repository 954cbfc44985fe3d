/**
 * `GET /v1/metrics`: the query and the JSON answer (Prometheus text is
 * rendered from the same data, metrics/prometheus.ts).
 *
 * @module
 */
import { z } from "zod";
import { JobTypeName, StatsSchema } from "../job/schemas";
import { OBJECT_KINDS } from "../metering/usage";
import { COUNTER_HELP, COUNTERS, type CounterName } from "./counters";

export const MetricsQuerySchema = z.strictObject({
  type: JobTypeName.optional(),
  minutes: z.coerce.number().int().min(1).max(1440).default(60).meta({ description: "How many minutes of per-minute counters, up to now." }),
});
export type MetricsQuery = z.infer<typeof MetricsQuerySchema>;

const CountersSchema = z.object(
  Object.fromEntries(COUNTERS.map((c) => [c, z.number().int().meta({ description: COUNTER_HELP[c] })])) as Record<CounterName, z.ZodNumber>,
);

const UsageSchema = z.object({
  object: z.enum(OBJECT_KINDS).meta({ description: "The kind of Durable Object: scope (jobs), catalog, pool, schedule or wait (parked pull claims)." }),
  rowsWritten: z.number().int().meta({ description: "SQLite rows written (each index entry a write touches counts), from each statement's cursor." }),
  rowsRead: z.number().int().meta({ description: "SQLite rows read, from each statement's cursor." }),
  requests: z.number().int().meta({ description: "Requests: RPC method calls, fetches and alarms." }),
  activeMs: z.number().meta({ description: "Wall time with at least one request in progress (ms)." }),
  setupRowsWritten: z.number().int().meta({ description: "Of rowsWritten, those of schema migrations: new objects' setup (docs/operating.md \"What the meters count\")." }),
  setupRowsRead: z.number().int().meta({ description: "Of rowsRead, those of schema migrations." }),
});

export const MetricsSchema = z.object({
  at: z.number().meta({ description: "When the catalog answered (epoch ms)." }),
  types: z.array(
    StatsSchema.extend({
      type: z.string(),
      unhandled: z.boolean().meta({ description: "Due jobs that nothing will run: no binding, not declared, no pull claim for it in the last hour (GET /v1/stats, unhandledTypes)." }),
      totals: CountersSchema.meta({ description: "Counted since the catalog began; they only grow." }),
    }),
  ),
  minutes: z.array(CountersSchema.extend({ minute: z.number().meta({ description: "The minute's start (epoch ms)." }), type: z.string() })),
  objects: z
    .array(UsageSchema)
    .meta({ description: "What each kind of Durable Object used since the catalog began, as its meters counted (docs/design.md \"What a job costs\"): what Cloudflare bills." }),
  objectMinutes: z.array(UsageSchema.extend({ minute: z.number().meta({ description: "The minute's start (epoch ms)." }) })).meta({ description: "The same per minute, over the same minutes as `minutes`." }),
});
export type Metrics = z.infer<typeof MetricsSchema>;
