/**
 * The queue as the catalog sees it: counts and metrics per type, the types and their pause state,
 * pausing one queue-wide, the busiest objects (docs/design.md "The catalog", "Pause"). As fresh as
 * the catalog's summaries (about a second). No SQL here.
 *
 * @module
 */
import { catalogName } from "../catalog/shards";
import { requireDeclared, requireKnown } from "../config/known-types";
import { parseHome } from "../job/home";
import type { PauseResult, ScopeStats, Stats, StatsResult, TypeList } from "../job/schemas";
import { zeroCounters } from "../metrics/counters";
import type { Metrics, MetricsQuery } from "../metrics/schemas";
import { zeroKinds } from "../scope/api";
import type { QueueContext } from "./queue-context";

export class Overview {
  constructor(private readonly q: QueueContext) {}

  async stats(type: string | undefined): Promise<StatsResult> {
    return this.q.catalog().stats(type ?? null);
  }

  /** metrics: per type (every configured type, and any other the catalog knows), counts, lag and totals; and the per-minute series of the last `minutes` minutes. */
  async metrics(q: MetricsQuery): Promise<Metrics> {
    const o = await this.q.catalog().overview(q.minutes, q.type ?? null);
    const names = [...new Set([...Object.keys(this.q.config.types), ...o.types.map((t) => t.type), ...o.totals.map((t) => t.type)])]
      .filter((t) => q.type === undefined || t === q.type)
      .sort();
    const types = names.map((type) => {
      const { type: _t, ...stats } = o.types.find((s) => s.type === type) ?? { type, ...emptyStats(), unhandled: false };
      const { type: _u, ...totals } = o.totals.find((s) => s.type === type) ?? { type, ...zeroCounters() };
      return { type, ...stats, totals };
    });
    return { at: o.at, types, minutes: o.minutes, objects: o.usage, objectMinutes: o.usageMinutes };
  }

  /**
   * setPaused: every catalog shard records the change and tells each object it promised to (catalog/pause-store.ts);
   * the answer comes once they were told, so nothing of a paused type starts after it. Enqueues are not refused.
   */
  async setPaused(type: string, paused: boolean): Promise<PauseResult> {
    await this.requireKnownType(type, "type");
    const out = await this.q.catalog().setPaused(type, paused);
    // By hand, the type is the operator's now: no budget holds it, nor resumes it at its window's turn (catalog/budgets.ts).
    if (this.q.config.budgets.length > 0) await this.q.env.CATALOG.getByName(catalogName(0)).budgetForget(type);
    return { type, paused, unreached: out.untold.length };
  }

  /** requireKnownType: refuse an operator's type name the queue neither declares nor has seen (config/known-types.ts). */
  async requireKnownType(type: string, field: string): Promise<void> {
    requireDeclared(this.q.config, [type], () => field);
    if (Object.hasOwn(this.q.config.types, type)) return;
    requireKnown(type, (await this.types()).items.map((t) => t.type), field);
  }

  /** pauses: every type ever paused, with whether it is now. */
  pauses(): Promise<Map<string, { paused: boolean; changedAt: number }>> {
    return this.q.catalog().pauses();
  }

  /** types: every configured type and any other the catalog has seen or paused, with pause state and counts. */
  async types(): Promise<TypeList> {
    const { config } = this.q;
    const [o, pauses] = await Promise.all([this.q.catalog().overview(1, null), this.pauses()]);
    const names = [...new Set([...Object.keys(config.types), ...o.types.map((t) => t.type), ...pauses.keys()])].sort();
    return {
      items: names.map((type) => {
        const { type: _t, unhandled: _u, ...counts } = o.types.find((s) => s.type === type) ?? { type, ...emptyStats(), unhandled: false };
        const pause = pauses.get(type);
        return {
          type,
          paused: pause?.paused ?? false,
          pausedChangedAt: pause?.changedAt ?? null,
          pushed: config.pushTypes.includes(type),
          declared: type in config.types,
          counts,
        };
      }),
    };
  }

  /** busiestScopes: homes by live jobs, most first (scope objects and type shards alike). */
  async busiestScopes(limit: number): Promise<ScopeStats[]> {
    const homes = await this.q.catalog().busiestHomes(limit);
    return homes.map(({ home, ...stats }) => {
      const parsed = parseHome(home);
      return { home, scope: parsed?.kind === "scope" ? parsed.scope : null, ...stats };
    });
  }
}

function emptyStats(): Stats {
  return { pending: 0, scheduled: 0, running: 0, completed: 0, failed: 0, cancelled: 0, superseded: 0, waiting: 0, expired: 0, oldestPendingLagMs: 0, failedByKind: zeroKinds() };
}
