/**
 * Spend caps, the coordinator's side (docs/operating.md "Spend caps"): the main catalog object keeps them
 * (catalog/budget-keeper.ts); this asks it.
 *
 * @module
 */
import { catalogName } from "../catalog/shards";
import { QueueError } from "../errors";
import type { BudgetView } from "../job/schemas/budgets";
import type { QueueContext } from "./queue-context";

export class Budgets {
  constructor(private readonly q: QueueContext) {}

  private main() {
    return this.q.env.CATALOG.getByName(catalogName(0));
  }

  list(): Promise<BudgetView[]> {
    return this.q.config.budgets.length === 0 ? Promise.resolve([]) : this.main().budgetViews();
  }

  lift(name: string): Promise<BudgetView> {
    // Named here: a refusal thrown in the object would reach the caller as a 500.
    if (!this.q.config.budgets.some((b) => b.name === name)) {
      throw new QueueError("not_found", `no budget named "${name}" (the config's budgets: ${this.q.config.budgets.map((b) => b.name).join(", ") || "none"})`);
    }
    return this.main().liftBudget(name);
  }

  /** health: the budgets holding types paused, and those past their soft limit (GET /v1/health); none without budgets. */
  async health(now: number): Promise<{ paused: string[]; warned: string[] } | undefined> {
    if (this.q.config.budgets.length === 0) return undefined;
    const views = await this.list();
    return { paused: views.filter((v) => v.paused.length > 0).map((v) => v.name), warned: views.filter((v) => v.softCrossedAt !== null && v.windowEnd > now).map((v) => v.name) };
  }
}
