/**
 * Pull claims serve scopes fairly: the scope that has waited longest goes
 * first, where waiting starts at the later of its oldest due job and the last
 * time a claim was sent to it.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock";
import { pickHomesForClaim, ServedHomes } from "../../src/catalog/catalog-store";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { api, flushJobs, uniqueScope, uniqueType } from "../helpers/api";
import { env } from "../helpers/scope";

const names = (ranked: { home: string }[]) => ranked.map((r) => r.home);

describe("fair pull claims", () => {
  it("a one-job tenant is served within the first claims behind a 10,000-job tenant", async () => {
    const type = uniqueType();
    const big = uniqueScope("big");
    const small = uniqueScope("small");
    let firstBig = "";
    for (let b = 0; b < 10; b++) {
      const r = await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 1000 }, (_, i) => ({ type, scope: big, payload: { i } })) });
      expect(r.status).toBe(200);
      firstBig ||= r.body.results[0].id;
    }
    const one = (await api("POST", "/v1/jobs", { type, scope: small, payload: {} })).body.job;
    await flushJobs(firstBig, one.id);

    const served: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 1 });
      served.push(r.body.jobs[0].scope.id);
    }
    // The big tenant's oldest job is older, so it goes first; then the small one has waited longest.
    expect(served.slice(0, 2)).toEqual([big.id, small.id]);
  });

  it("ranks by max(oldest due, last served) and marks only the homes it hands out", async () => {
    const catalog = env.CATALOG.getByName(`catalog-${crypto.randomUUID()}`);
    const clock = new ManualClock(10_000);
    const t = uniqueType();
    const kinds = { retries_exhausted: 0, fatal: 0, stalled: 0, timeout: 0 };
    const summary = (home: string, nextRunAt: number) => ({
      home,
      at: 1,
      types: [{ type: t, pending: 1, scheduled: 0, running: 0, completed: 0, failed: kinds, cancelled: 0, nextRunAt }],
      metrics: [],
    });
    await runInDurableObject(catalog, (o: CatalogDO) => {
      o.clock = clock;
    });
    await catalog.report(summary("a", 1_000));
    await catalog.report(summary("b", 2_000));
    await catalog.report(summary("c", 3_000));
    await catalog.report(summary("future", 20_000));
    expect(names(await catalog.pickHomes([t], [], 1, 2))).toEqual(["a", "b", "c"]);
    // a was served at 10,000: b and c have waited longer now.
    expect(names(await catalog.pickHomes([t], [], 2, 0))).toEqual(["b", "c"]);
    clock.advance(1);
    expect(names(await catalog.pickHomes([t], [], 3, 0))).toEqual(["a", "b", "c"]);
    expect(names(await catalog.pickHomes(["other"], [], 3, 0))).toEqual([]);
    // An untyped claim leaves out excluded (pushed) types: nothing else is due here.
    expect(names(await catalog.pickHomes(null, [t], 3, 0))).toEqual([]);
    const direct = await runInDurableObject(catalog, (_o: CatalogDO, state) => pickHomesForClaim(state.storage.sql, new ServedHomes(), null, [], 1, 0, 10_001));
    expect(direct).toHaveLength(1);
    // Ranking and marking write nothing to the catalog's storage: who was served is kept in memory.
    const written = await runInDurableObject(catalog, (_o: CatalogDO, state) => {
      let n = 0;
      const counting = {
        exec: (query: string, ...args: unknown[]) => {
          const cursor = state.storage.sql.exec(query, ...args);
          const rows = cursor.toArray();
          n += cursor.rowsWritten;
          return { toArray: () => rows };
        },
      } as unknown as SqlStorage;
      pickHomesForClaim(counting, new ServedHomes(), [t], [], 2, 1, 10_002);
      return n;
    });
    expect(written).toBe(0);
  });

  it("ignores a summary older than the one it holds", async () => {
    const catalog = env.CATALOG.getByName(`catalog-${crypto.randomUUID()}`);
    const kinds = { retries_exhausted: 0, fatal: 0, stalled: 0, timeout: 0 };
    const mk = (at: number, pending: number) => ({
      home: "h",
      at,
      types: [{ type: "x", pending, scheduled: 0, running: 0, completed: 0, failed: kinds, cancelled: 0, nextRunAt: pending ? 1 : null }],
      metrics: [],
    });
    await catalog.report(mk(20, 5));
    await catalog.report(mk(10, 1));
    expect((await catalog.stats("x")).pending).toBe(5);
    await catalog.report(mk(30, 0));
    expect((await catalog.stats("x")).pending).toBe(0);
  });
});
