/**
 * `GET /v1/metrics`: the query and the JSON answer (Prometheus text is
 * rendered from the same data, metrics/prometheus.ts).
 *
 * @module
 */
import { z } from "zod";
import { JobTypeName, StatsSchema } from "../job/schemas";
import { COUNTER_HELP, COUNTERS, type CounterName } from "./counters";

export const MetricsQuerySchema = z.strictObject({
  type: JobTypeName.optional(),
  minutes: z.coerce.number().int().min(1).max(1440).default(60).meta({ description: "How many minutes of per-minute counters, up to now." }),
});
export type MetricsQuery = z.infer<typeof MetricsQuerySchema>;

const CountersSchema = z.object(
  Object.fromEntries(COUNTERS.map((c) => [c, z.number().int().meta({ description: COUNTER_HELP[c] })])) as Record<CounterName, z.ZodNumber>,
);

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
});
export type Metrics = z.infer<typeof MetricsSchema>;
