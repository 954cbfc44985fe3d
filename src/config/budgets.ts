/**
 * Spend caps (docs/operating.md "Spend caps"): a budget over a unit the meters count, per UTC hour or day, for the
 * whole queue or some job types. Crossing its `soft` limit emits an event and shows on the dashboard and
 * `/v1/health`; crossing its `hard` limit pauses the types it covers (new jobs are kept, nothing of them starts)
 * until the window turns or an operator lifts it (catalog/budgets.ts).
 *
 * Rows written and requests are counted per object, and an object holds several types' jobs: they are the queue's
 * units. A type's budget counts what its own counters count — attempts started, jobs enqueued — which drive its rows.
 *
 * @module
 */
import { z } from "zod";
import { wellFormed } from "../job/names";

import { BUDGET_UNITS, type BudgetUnit } from "../job/schemas/budgets";

export { BUDGET_UNITS, type BudgetUnit };
/** The units counted per object, so only for the whole queue. */
const QUEUE_UNITS: readonly BudgetUnit[] = ["rowsWritten", "requests"];

export const BudgetSchema = z
  .strictObject({
    window: z.enum(["hour", "day"]).meta({ description: "The UTC hour or day it counts over; a new one starts from zero." }),
    unit: z.enum(BUDGET_UNITS).meta({ description: "rowsWritten and requests: the queue's objects' (the meters); attempts, enqueued: the types' counters." }),
    types: z.array(wellFormed(z.string().min(1).max(128))).min(1).max(100).optional().meta({ description: "The job types it counts and pauses; absent: the whole queue." }),
    soft: z.number().int().min(1).optional().meta({ description: "Crossing it emits an event and shows on the dashboard and /v1/health." }),
    hard: z.number().int().min(1).optional().meta({ description: "Crossing it pauses the types it covers until the window turns or an operator lifts it." }),
  })
  .superRefine((b, ctx) => {
    if (b.soft === undefined && b.hard === undefined) ctx.addIssue({ code: "custom", path: ["hard"], message: "give soft, hard or both: a budget with no limit does nothing" });
    if (b.soft !== undefined && b.hard !== undefined && b.soft >= b.hard) ctx.addIssue({ code: "custom", path: ["soft"], message: `${b.soft} is not below hard ${b.hard}: the warning comes before the stop` });
    if (b.types !== undefined && QUEUE_UNITS.includes(b.unit)) {
      ctx.addIssue({ code: "custom", path: ["unit"], message: `${b.unit} is counted per object, and an object holds several types' jobs: a budget of types counts attempts or enqueued` });
    }
  });

export interface BudgetSettings {
  name: string;
  window: "hour" | "day";
  unit: BudgetUnit;
  /** null: the whole queue. */
  types: readonly string[] | null;
  soft: number | null;
  hard: number | null;
}

export function budgetSettings(input: Record<string, z.infer<typeof BudgetSchema>> | undefined): BudgetSettings[] {
  return Object.entries(input ?? {}).map(([name, b]) => ({ name, window: b.window, unit: b.unit, types: b.types ?? null, soft: b.soft ?? null, hard: b.hard ?? null }));
}

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** windowOf: the UTC hour or day `now` is in, as [start, end). */
export function windowOf(window: "hour" | "day", now: number): { start: number; end: number } {
  const size = window === "hour" ? HOUR_MS : DAY_MS;
  const start = Math.floor(now / size) * size;
  return { start, end: start + size };
}
