/**
 * The main catalog object's spend caps at work (catalog/budgets.ts; docs/operating.md "Spend caps"): each check sums
 * what every shard counted in the budgets' windows, decides in one transaction, then pauses and resumes the types
 * as POST /v1/types/{type}/pause does (every shard, each telling its homes), logs the events, and says when the next
 * window with a pause in it turns (the alarm's time). The DO (catalog-do.ts) holds one and forwards to it.
 *
 * @module
 */
import type { BudgetSettings } from "../config/budgets";
import type { QueueConfig } from "../config/schema";
import type { BudgetView } from "../job/schemas/budgets";
import { QueueError } from "../errors";
import { apply, check, forget, lift, nextTurn, spend, spendQuery, views, type BudgetActions, type SpendQuery } from "./budgets";

export interface BudgetKeeperDeps {
  sql: SqlStorage;
  transact<T>(fn: () => T): T;
  config: QueueConfig;
  /** The other shards' sums for these queries, one list per shard (none when the catalog has one shard). */
  otherShards(queries: SpendQuery[]): Promise<number[][]>;
  /** The types the other shards know of (a queue budget crossing its hard limit covers them too). */
  otherShardsTypes(): Promise<string[]>;
  /** Pause or resume a type in every shard. */
  setPaused(type: string, paused: boolean): Promise<void>;
  log(line: Record<string, unknown>): void;
}

export class BudgetKeeper {
  constructor(private readonly d: BudgetKeeperDeps) {}

  private get budgets(): readonly BudgetSettings[] {
    return this.d.config.budgets;
  }

  /** spent: each budget's window's sum over every shard. */
  private async spent(now: number): Promise<number[]> {
    const queries = this.budgets.map((b) => spendQuery(b, now));
    const own = spend(this.d.sql, queries);
    if (this.d.config.catalogShards <= 1) return own;
    const others = await this.d.otherShards(queries);
    return own.map((n, i) => others.reduce((sum, shard) => sum + (shard[i] ?? 0), n));
  }

  /** check: compare, act, and answer when the alarm should come back for a window's turn (null: no pause held). */
  async check(now: number): Promise<number | null> {
    if (this.budgets.length === 0) return null;
    const spent = await this.spent(now);
    // Only while a queue budget is past its hard limit are the other shards asked what types they know.
    const queueOver = this.budgets.some((b, i) => b.types === null && b.hard !== null && (spent[i] ?? 0) >= b.hard);
    const others = queueOver && this.d.config.catalogShards > 1 ? await this.d.otherShardsTypes() : [];
    await this.act(check(this.d.sql, this.budgets, spent, Object.keys(this.d.config.types), now, others));
    return nextTurn(this.d.sql, this.budgets, now);
  }

  /**
   * act: the pauses and resumes first, then what was decided is written: a shard out of reach fails the call (the
   * alarm's pass, retried) with nothing written, so the next check decides it again — never a budget that says it
   * holds a type no shard paused.
   */
  private async act(actions: BudgetActions): Promise<void> {
    for (const t of actions.resume) await this.d.setPaused(t, false);
    for (const t of actions.pause) await this.d.setPaused(t, true);
    this.d.transact(() => apply(this.d.sql, actions));
    for (const e of actions.events) this.d.log(e);
  }

  /** forget: an operator paused or resumed the type by hand; no budget holds it any more. */
  forget(type: string): void {
    this.d.transact(() => forget(this.d.sql, type));
  }

  async views(now: number): Promise<BudgetView[]> {
    return views(this.d.sql, this.budgets, await this.spent(now), now);
  }

  /** lift: an operator resumes what the budget paused, for the rest of its window; answers its view. */
  async lift(name: string, now: number): Promise<BudgetView> {
    const b = this.budgets.find((x) => x.name === name);
    if (!b) throw new QueueError("not_found", `no budget named "${name}" (the config's budgets: ${this.budgets.map((x) => x.name).join(", ") || "none"})`);
    await this.act(lift(this.d.sql, this.budgets, b, now));
    return (await this.views(now)).find((v) => v.name === name)!;
  }
}
