/**
 * The catalog, sharded (docs/design.md "The catalog at scale"): `catalog.shards`
 * CatalogDO objects, each holding the summaries of the homes that hash to it
 * (FNV-1a of the home's name, the same hash as type shards). A home reports
 * to its own shard only, so the report load — about one write a second per
 * busy home — is split `shards` ways. Reads that span homes ask every shard
 * and merge: sums for counts, name order for listings (each shard pages in
 * name order, so the first `limit` of the merge are the first `limit`
 * overall), rank order for pull claims.
 *
 * Shard 0 keeps the name the single catalog always had (`catalog`), so one
 * shard is the catalog as it was. The count must stay fixed once homes have
 * reported: a home that hashes elsewhere after a change reports to a new
 * shard and is listed twice until its old entry is pruned by hand.
 *
 * @module
 */
import { addUsage } from "../metering/usage";
import { CATALOG_SHARDS_MAX } from "../config/schema";
import type { Stats, StatsResult } from "../job/schemas";
import { shardOf } from "../job/home";
import type { JobState, TerminalState } from "../job/states";
import type { Counters, MinuteCounters } from "../metrics/counters";
import { COUNTERS } from "../metrics/counters";
import type { HomeSummary } from "../scope/report/summary";
import type { CatalogDO, Overview, RankedHome } from "./catalog-do";
import type { PauseSync } from "./pause-store";
import type { HomeFilter } from "./catalog-store";

/**
 * The writes one catalog shard should take per second at most: 80% of the
 * ~1,000 requests a second one Durable Object serves (docs/design.md, the
 * scale model), leaving room for the reads of stats, listings and claims.
 */
export const CATALOG_WRITES_PER_SEC_BOUND = 800;

/**
 * catalogShardsFor: the shards `busyHomes` homes need, each reporting as often
 * as its reporter allows (once per `reportIntervalMs`: REPORT_MIN_INTERVAL_MS,
 * scope/report/catalog-report.ts), so that even the fullest shard stays under the
 * bound: the mean is kept at 80% of it, room for how unevenly a hash spreads
 * them. The interval is the reporter's, so it is passed in: the scope objects
 * import the catalog, and the catalog must not import them back
 * (scripts/check-cycles.mjs).
 */
export function catalogShardsFor(busyHomes: number, reportIntervalMs: number): number {
  const reportsPerSec = busyHomes * (1000 / reportIntervalMs);
  return Math.min(CATALOG_SHARDS_MAX, Math.max(1, Math.ceil(reportsPerSec / (0.8 * CATALOG_WRITES_PER_SEC_BOUND))));
}

/** catalogName: the object of shard k (`prefix` only differs in tests that want catalogs of their own). */
export function catalogName(k: number, prefix = "catalog"): string {
  return k === 0 ? prefix : `${prefix}:${k}`;
}

/** catalogShardOf: the shard a home reports to. */
export function catalogShardOf(home: string, shards: number): number {
  return shards <= 1 ? 0 : shardOf(home, shards);
}

type Stub = DurableObjectStub<CatalogDO>;

export class Catalogs {
  private readonly stubs: Stub[];

  constructor(ns: DurableObjectNamespace<CatalogDO>, readonly shards: number, prefix = "catalog") {
    this.stubs = Array.from({ length: shards }, (_, k) => ns.getByName(catalogName(k, prefix)));
  }

  /** of: the shard holding this home. */
  of(home: string): Stub {
    return this.stubs[catalogShardOf(home, this.shards)]!;
  }

  /** report: to the home's own shard; the answer is that shard's pause state (pause-store.ts). */
  report(summary: HomeSummary): Promise<PauseSync> {
    return this.of(summary.home).report(summary);
  }

  pauseSync(home: string): Promise<PauseSync> {
    return this.of(home).pauseSync(home);
  }

  /** setPaused: every shard records the change and tells its homes; the answer adds up who could not be told. */
  async setPaused(type: string, paused: boolean): Promise<{ told: number; untold: string[] }> {
    const parts = await this.each((c) => c.setPaused(type, paused));
    return { told: parts.reduce((n, p) => n + p.told, 0), untold: parts.flatMap((p) => p.untold) };
  }

  /** pauses: the same on every shard, but a shard that failed mid-change may differ: paused if any says so. */
  async pauses(): Promise<Map<string, { paused: boolean; changedAt: number }>> {
    const out = new Map<string, { paused: boolean; changedAt: number }>();
    for (const p of (await this.each((c) => c.pauses())).flat()) {
      const held = out.get(p.type);
      out.set(p.type, { paused: (held?.paused ?? false) || p.paused, changedAt: Math.max(held?.changedAt ?? 0, p.changedAt) });
    }
    return out;
  }

  async busyType(types: string[]): Promise<string | null> {
    for (const t of await this.each((c) => c.busyType(types))) if (t !== null) return t;
    return null;
  }

  async stats(type: string | null): Promise<StatsResult> {
    const parts = await this.each((c) => c.stats(type));
    return { ...sumStats(parts), unhandledTypes: union(parts.map((p) => p.unhandledTypes)) };
  }

  async overview(minutes: number, type: string | null): Promise<Overview> {
    const parts = await this.each((c) => c.overview(minutes, type));
    const types = mergeBy(parts.flatMap((p) => p.types), (t) => t.type, (a, b) => ({ ...sumStats([a, b]), type: a.type, unhandled: a.unhandled || b.unhandled }));
    const totals = mergeBy(parts.flatMap((p) => p.totals), (t) => t.type, (a, b) => ({ ...sumCounters(a, b), type: a.type }));
    const series = mergeBy(parts.flatMap((p) => p.minutes), (m) => `${m.minute}\u0000${m.type}`, (a, b) => ({ ...sumCounters(a, b), minute: a.minute, type: a.type }));
    return {
      at: Math.max(...parts.map((p) => p.at)),
      types: types.sort((a, b) => cmp(a.type, b.type)),
      totals: totals.sort((a, b) => cmp(a.type, b.type)),
      minutes: series.sort((a, b) => a.minute - b.minute || cmp(a.type, b.type)),
      usage: mergeBy(parts.flatMap((p) => p.usage), (u) => u.object, (a, b) => addUsage({ ...a }, b)).sort((a, b) => cmp(a.object, b.object)),
      usageMinutes: mergeBy(parts.flatMap((p) => p.usageMinutes), (u) => `${u.minute}/${u.object}`, (a, b) => addUsage({ ...a }, b)).sort(
        (a, b) => a.minute - b.minute || cmp(a.object, b.object),
      ),
    };
  }

  async busiestHomes(limit: number): Promise<(Stats & { home: string })[]> {
    const live = (s: Stats) => s.pending + s.scheduled + s.running + s.waiting;
    return (await this.each((c) => c.busiestHomes(limit)))
      .flat()
      .sort((a, b) => live(b) - live(a) || cmp(a.home, b.home))
      .slice(0, limit);
  }

  async listHomes(filter: HomeFilter, after: string, inclusive: boolean, limit: number): Promise<string[]> {
    return firstByName(await this.each((c) => c.listHomes(filter, after, inclusive, limit)), limit);
  }

  async homesWithTerminal(states: TerminalState[], after: string, limit: number): Promise<string[]> {
    return firstByName(await this.each((c) => c.homesWithTerminal(states, after, limit)), limit);
  }

  /**
   * pickHomes: the homes a pull claim should ask, best first (catalog-store.ts, pickHomesForClaim). One
   * shard ranks and marks in one call; several each rank theirs, the best overall are kept, and each
   * shard is told which of its homes were served (in memory there: no write).
   */
  async pickHomes(types: string[] | null, exclude: string[], limit: number, spare: number): Promise<string[]> {
    if (this.shards === 1) return (await this.stubs[0]!.pickHomes(types, exclude, limit, spare, true)).map((r) => r.home);
    const ranked = (await this.each((c) => c.pickHomes(types, exclude, limit, spare, false)))
      .flat()
      .sort((a: RankedHome, b: RankedHome) => a.waited - b.waited || cmp(a.home, b.home))
      .slice(0, limit + spare);
    const served = new Map<number, string[]>();
    for (const r of ranked.slice(0, limit)) {
      const k = catalogShardOf(r.home, this.shards);
      served.set(k, [...(served.get(k) ?? []), r.home]);
    }
    await Promise.all([...served].map(([k, homes]) => this.stubs[k]!.served(homes)));
    return ranked.map((r) => r.home);
  }

  private each<T>(f: (c: Stub) => Promise<T>): Promise<T[]> {
    return Promise.all(this.stubs.map(f));
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function union(lists: string[][]): string[] {
  return [...new Set(lists.flat())].sort();
}

function firstByName(lists: string[][], limit: number): string[] {
  return [...new Set(lists.flat())].sort(cmp).slice(0, limit);
}

function mergeBy<T>(items: T[], key: (t: T) => string, add: (a: T, b: T) => T): T[] {
  const out = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    const held = out.get(k);
    out.set(k, held === undefined ? item : add(held, item));
  }
  return [...out.values()];
}

function sumCounters(a: Counters, b: Counters): Counters {
  return Object.fromEntries(COUNTERS.map((c) => [c, a[c] + b[c]])) as Counters;
}

/** sumStats: counts add up; the oldest lag is the largest of them. */
export function sumStats(parts: readonly Stats[]): Stats {
  const zero: Stats = {
    pending: 0,
    scheduled: 0,
    running: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    superseded: 0,
    waiting: 0,
    expired: 0,
    oldestPendingLagMs: 0,
    failedByKind: { retries_exhausted: 0, fatal: 0, stalled: 0, timeout: 0, nondeterminism: 0 },
  };
  return parts.reduce<Stats>(
    (s, p) => ({
      pending: s.pending + p.pending,
      scheduled: s.scheduled + p.scheduled,
      running: s.running + p.running,
      completed: s.completed + p.completed,
      failed: s.failed + p.failed,
      cancelled: s.cancelled + p.cancelled,
      superseded: s.superseded + p.superseded,
      waiting: s.waiting + p.waiting,
      expired: s.expired + p.expired,
      oldestPendingLagMs: Math.max(s.oldestPendingLagMs, p.oldestPendingLagMs),
      failedByKind: {
        retries_exhausted: s.failedByKind.retries_exhausted + p.failedByKind.retries_exhausted,
        fatal: s.failedByKind.fatal + p.failedByKind.fatal,
        stalled: s.failedByKind.stalled + p.failedByKind.stalled,
        timeout: s.failedByKind.timeout + p.failedByKind.timeout,
        nondeterminism: s.failedByKind.nondeterminism + p.failedByKind.nondeterminism,
      },
    }),
    zero,
  );
}

export type { MinuteCounters };
