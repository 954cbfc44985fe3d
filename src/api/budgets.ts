/**
 * Spend caps (docs/operating.md "Spend caps"): each budget's window, and lifting one's pause. The rule and fields of
 * a declaration: api/operation.ts.
 *
 * @module
 */
import { BudgetParams, BudgetResultSchema, BudgetsResultSchema } from "../job/schemas/budgets";
import { EmptyBodySchema } from "../job/schemas/pieces";
import { operation } from "./operation";

export const BUDGET_OPERATIONS = {
  listBudgets: operation({
    access: "read",
    method: "get",
    path: "/v1/budgets",
    summary: "The config's budgets, each with what its window has spent, when it crossed its soft and hard limits, and the types its hard limit holds paused",
    response: BudgetsResultSchema,
    errors: [],
  }),
  liftBudget: operation({
    access: "operate",
    method: "post",
    path: "/v1/budgets/{name}/lift",
    summary: "Resume the types a budget's hard limit paused; it pauses nothing more until its window turns",
    params: BudgetParams,
    body: EmptyBodySchema,
    response: BudgetResultSchema,
    errors: ["not_found"],
  }),
};
