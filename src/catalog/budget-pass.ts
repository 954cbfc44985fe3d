/**
 * The spend caps' part of a catalog shard's alarm (docs/operating.md "Spend caps", When it acts): the main object
 * checks (budget-keeper.ts) — at every alarm with one shard, with several at most every BUDGET_CHECK_EVERY_MS or when
 * a pause's window turned, since each check asks every other shard — and the other shards ask it to, at most as
 * often; each pass says when the alarm must come back for a window's turn. It holds the CatalogDO's budget wiring,
 * so the object stays a shell.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import type { Env } from "../env";
import { BudgetKeeper } from "./budget-keeper";
import { catalogName } from "./shards";

/** With several catalog shards, the budgets are checked at most this often (each check asks the other shards). */
export const BUDGET_CHECK_EVERY_MS = 30_000;

export interface BudgetPassDeps {
  sql: SqlStorage;
  transact<T>(fn: () => T): T;
  config: QueueConfig;
  env: Env;
  /** This shard's own name (catalog/shards.ts catalogName), kept by the object (object-name.ts). */
  name: string;
  /** This shard's pause, not metered as a request of its own (CatalogDO.pauseHere). */
  pauseHere(type: string, paused: boolean): Promise<unknown>;
}

export class BudgetPass {
  readonly keeper: BudgetKeeper;
  /**
   * false: the alarm leaves the spend caps alone. The cost harness (test/cost) measures the job path as the default
   * config runs it, without budgets; their own checks are counted in docs/operating.md "Spend caps".
   */
  enabled = true;
  /** When this instance last checked (the main object) or asked for a check (another shard), by its clock. */
  private checkedAt = -Infinity;
  /** The window turn the last check asked to come back for. */
  private turn: number | null = null;

  constructor(private readonly d: BudgetPassDeps) {
    // The shards after this one (the main object, shard 0), by stub.
    const others = () => Array.from({ length: d.config.catalogShards - 1 }, (_, k) => d.env.CATALOG.getByName(catalogName(k + 1)));
    this.keeper = new BudgetKeeper({
      sql: d.sql,
      transact: d.transact,
      config: d.config,
      otherShards: (queries) => Promise.all(others().map((s) => s.spendOf(queries))),
      otherShardsTypes: async () => (await Promise.all(others().map((s) => s.knownTypesOf()))).flat(),
      // This shard directly; the others as the coordinator's pause does.
      setPaused: async (type, paused) => {
        await Promise.all([d.pauseHere(type, paused), ...others().map((s) => s.setPaused(type, paused))]);
      },
      log: (line) => console.log(JSON.stringify(line)),
    });
  }

  get isMain(): boolean {
    return this.d.name === catalogName(0);
  }

  /**
   * run: this alarm pass's part; answers when the alarm must come back for a window's turn (null: no pause held). Called
   * directly, not through a method of the object: that is metered as a request, and a request after the usage taken
   * arms the next usage alarm — every alarm would arm another.
   */
  async run(now: number): Promise<number | null> {
    if (!this.enabled || this.d.config.budgets.length === 0) return this.turn;
    const several = this.d.config.catalogShards > 1;
    const due = !several || now - this.checkedAt >= BUDGET_CHECK_EVERY_MS || (this.turn !== null && now >= this.turn);
    if (this.isMain && due) {
      this.checkedAt = now;
      this.turn = await this.keeper.check(now);
    } else if (!this.isMain && now - this.checkedAt >= BUDGET_CHECK_EVERY_MS) {
      // Reports the main object has not seen came here: asking is a request there, which arms its alarm (5 s on).
      this.checkedAt = now;
      await this.d.env.CATALOG.getByName(catalogName(0))
        .budgetPing()
        .catch((e: unknown) => console.error(JSON.stringify({ event: "budget:ping_failed", shard: this.d.name, error: String(e) })));
    }
    return this.turn;
  }
}
