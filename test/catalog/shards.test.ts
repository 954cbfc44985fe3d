/**
 * The sharded catalog (catalog/shards.ts): reads that span shards are merged
 * correctly, and — a simulation of 10,000 busy homes — the writes each shard
 * takes per second stay under the bound docs/design.md's scale model rests on.
 * Each test uses catalogs of its own (a name prefix), so the live ones stay clean.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applyReport, pickHomesForClaim, ServedHomes } from "../../src/catalog/catalog-store";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { CATALOG_WRITES_PER_SEC_BOUND, Catalogs, catalogName, catalogShardOf, catalogShardsFor } from "../../src/catalog/shards";
import { REPORT_MIN_INTERVAL_MS } from "../../src/scope/report/catalog-report";
import type { HomeSummary } from "../../src/scope/report/summary";
import { env } from "../helpers/scope";

const failed = { retries_exhausted: 0, fatal: 0, stalled: 0, timeout: 0 };
const summary = (home: string, at: number, type: string, counts: Partial<{ pending: number; running: number; completed: number; nextRunAt: number | null }>): HomeSummary => ({
  home,
  at,
  types: [{ type, pending: 0, scheduled: 0, running: 0, completed: 0, failed, cancelled: 0, nextRunAt: null, ...counts }],
  metrics: [],
});

describe("a sharded catalog", () => {
  it("sums stats, pages listings in name order and ranks claims across shards", async () => {
    const prefix = `cat-${crypto.randomUUID()}`;
    const catalogs = new Catalogs(env.CATALOG, 4, prefix);
    const type = "shard.t";
    const homes = Array.from({ length: 12 }, (_, i) => `scope:S:${String(i).padStart(2, "0")}`);
    expect(new Set(homes.map((h) => catalogShardOf(h, 4))).size).toBeGreaterThan(1); // they do spread
    const now = Date.now();
    for (const [i, home] of homes.entries()) await catalogs.report(summary(home, now, type, { pending: 1, completed: i, nextRunAt: now - 1000 * (i + 1) }));
    const stats = await catalogs.stats(type);
    expect(stats).toMatchObject({ pending: 12, completed: 66 });
    expect(stats.oldestPendingLagMs).toBeGreaterThanOrEqual(12_000);
    // Listing pages: 5 at a time, in name order, whichever shard holds each.
    const pages: string[][] = [];
    let after = "";
    for (;;) {
      const page = await catalogs.listHomes({ types: [type] }, after, false, 5);
      if (page.length === 0) break;
      pages.push(page);
      after = page.at(-1)!;
    }
    expect(pages.flat()).toEqual(homes);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    // Claims: the homes that waited longest overall, from whichever shard; the served step back.
    expect(await catalogs.pickHomes([type], [], 3, 0)).toEqual([homes[11], homes[10], homes[9]]);
    expect(await catalogs.pickHomes([type], [], 2, 0)).toEqual([homes[8], homes[7]]);
    expect(await catalogs.busyType(["other", type])).toBe(type);
    expect(await catalogs.busyType(["other"])).toBeNull();
    const busiest = await catalogs.busiestHomes(2);
    expect(busiest.map((b) => b.home)).toHaveLength(2);
    const overview = await catalogs.overview(5, type);
    expect(overview.types).toEqual([expect.objectContaining({ type, pending: 12, completed: 66 })]);
  });

  it("one shard is the catalog as it always was: the object named `catalog`", () => {
    expect(catalogName(0)).toBe("catalog");
    expect(catalogName(3)).toBe("catalog:3");
    expect(catalogShardOf("scope:x:y", 1)).toBe(0);
  });
});

describe("the catalog at scale (simulation)", () => {
  it("10,000 busy homes reporting as often as their reporter allows, and pull claims: each shard stays under the write bound", async () => {
    const homes = 10_000;
    const shards = catalogShardsFor(homes, REPORT_MIN_INTERVAL_MS);
    const prefix = `sim-${crypto.randomUUID()}`;
    const seconds = 3;
    const claimsPerSecond = 200;
    // A busy home sends at most one summary per REPORT_MIN_INTERVAL_MS (scope/report/catalog-report.ts): the most it can.
    const reportsPerHomePerSecond = 1000 / REPORT_MIN_INTERVAL_MS;
    const byShard = new Map<number, string[]>();
    for (let i = 0; i < homes; i++) {
      const home = `scope:Tenant:t${i}`;
      const k = catalogShardOf(home, shards);
      byShard.set(k, [...(byShard.get(k) ?? []), home]);
    }
    const writes: number[] = []; // per (shard, second): write transactions and rows a claim wrote
    const t0 = Date.UTC(2030, 0, 1);
    for (let s = 0; s < seconds; s++) {
      const now = t0 + s * 1000;
      for (let k = 0; k < shards; k++) {
        const mine = byShard.get(k) ?? [];
        const stub = env.CATALOG.getByName(catalogName(k, prefix));
        writes.push(
          await runInDurableObject(stub, (_o: CatalogDO, state) => {
            let n = 0;
            for (let r = 0; r < reportsPerHomePerSecond; r++) {
              for (const home of mine) {
                state.storage.transactionSync(() => applyReport(state.storage.sql, summary(home, now + r, "sim.t", { pending: 5, running: 1, nextRunAt: now - 10 })));
                n++;
              }
            }
            // Every claim asks every shard; what it writes there is counted row by row.
            const counting = {
              exec: (query: string, ...args: unknown[]) => {
                const cursor = state.storage.sql.exec(query, ...args);
                const rows = cursor.toArray();
                n += cursor.rowsWritten;
                return { toArray: () => rows, one: () => rows[0] };
              },
            } as unknown as SqlStorage;
            const served = new ServedHomes();
            for (let c = 0; c < claimsPerSecond; c++) pickHomesForClaim(counting, served, ["sim.t"], [], 10, 3, now + c, false);
            return n;
          }),
        );
      }
    }
    const most = Math.max(...writes);
    // Without shards, one object would take every report: ten times the bound.
    expect(homes * reportsPerHomePerSecond).toBeGreaterThan(CATALOG_WRITES_PER_SEC_BOUND);
    expect(most).toBeLessThanOrEqual(CATALOG_WRITES_PER_SEC_BOUND);
    // And the shards share the load: none takes much more than its even part (hashing is not lopsided).
    expect(most).toBeLessThan(1.25 * ((homes * reportsPerHomePerSecond) / shards));
  }, 120_000);
});
