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

/** How long this isolate answers /v1/health's budgets from what it last read. */
export const HEALTH_CACHE_MS = 10_000;
let healthCache: { at: number; value: { paused: string[]; warned: string[] } } | null = null;

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

  /**
   * health: the budgets holding types paused, and those past their soft limit (GET /v1/health); none without budgets.
   * Health needs no token and is probed often: it reads the budgets' states (one object, no sums), at most every
   * HEALTH_CACHE_MS per isolate, so a flood of probes costs the queue almost nothing and trips no requests budget.
   */
  async health(now: number): Promise<{ paused: string[]; warned: string[] } | undefined> {
    if (this.q.config.budgets.length === 0) return undefined;
    if (healthCache && now - healthCache.at < HEALTH_CACHE_MS) return healthCache.value;
    const value = await this.main().budgetHealth();
    healthCache = { at: now, value };
    return value;
  }
}
