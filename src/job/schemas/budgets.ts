/**
 * Spend caps (docs/operating.md "Spend caps"): `GET /v1/budgets`, `POST /v1/budgets/{name}/lift`.
 *
 * @module
 */
import { z } from "zod";
/** What a budget counts (config/budgets.ts says which are the queue's only). */
export const BUDGET_UNITS = ["rowsWritten", "requests", "attempts", "enqueued"] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

export const BudgetViewSchema = z.object({
  name: z.string(),
  window: z.enum(["hour", "day"]),
  unit: z.enum(BUDGET_UNITS),
  types: z.array(z.string()).nullable().meta({ description: "The job types it counts and pauses; null: the whole queue." }),
  soft: z.number().nullable(),
  hard: z.number().nullable(),
  spent: z.number().meta({ description: "What the window has counted so far (the meters' and counters' reports reach the catalog within seconds)." }),
  windowStart: z.number(),
  windowEnd: z.number(),
  softCrossedAt: z.number().nullable().meta({ description: "When this window crossed `soft`, or null." }),
  hardCrossedAt: z.number().nullable().meta({ description: "When this window crossed `hard`, or null." }),
  paused: z.array(z.string()).meta({ description: "The types its hard limit paused, still paused: resumed when the window turns, or by a lift." }),
  liftedAt: z.number().nullable().meta({ description: "When an operator lifted it in this window: it pauses nothing more until the next." }),
});
export type BudgetView = z.infer<typeof BudgetViewSchema>;
export const BudgetsResultSchema = z.object({ items: z.array(BudgetViewSchema) });
export const BudgetParams = z.strictObject({ name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "budget names are 1-64 characters of A-Z a-z 0-9 _ . -") });
export const BudgetResultSchema = z.object({ budget: BudgetViewSchema });
