/**
 * Every object kind woken cold by its alarm after a restart. Such an instance
 * is not told its name (`ctx.id.name` is undefined, and stays so for that
 * instance), so each must have kept what it needs about itself
 * (src/object-name.ts). A restart here is `ctx.abort()`; the cold instance is
 * then reached through an id rebuilt from its string, which carries no name —
 * what the runtime hands an alarm. Runs on the test runtime (the workerd of
 * @cloudflare/vitest-plugin); test/e2e/restart.test.ts does it on the workerd
 * `npm start` runs.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock";
import { scopeHome } from "../../src/job/home";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import type { PoolDO } from "../../src/pool/pool-do";
import type { ScheduleDO } from "../../src/schedule/schedule-do";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, uniqueScope, uniqueType } from "../helpers/api";
import { catalogOf, env, restartCold, T0 } from "../helpers/scope";

async function catalogRow(home: string, type: string) {
  return runInDurableObject(catalogOf(home), (_o: CatalogDO, state) =>
    state.storage.sql.exec<{ pending: number; scheduled: number; running: number; completed: number }>(
      "SELECT pending, scheduled, running, completed FROM home_type WHERE home = ? AND type = ?", home, type,
    ).toArray()[0],
  );
}

describe("a scope object woken cold by its alarm", () => {
  it("still reports to the catalog, so a delayed pull job that came due is claimed", async () => {
    const clock = new ManualClock(T0);
    const scope = uniqueScope("cold");
    const type = uniqueType("cold");
    const home = scopeHome(scope).name;
    await runInDurableObject(catalogOf(home), (o: CatalogDO) => {
      o.clock = clock;
    });
    const named = env.SCOPE.getByName(home);
    await runInDurableObject(named, (o: ScopeDO) => {
      o.clock = clock;
    });
    const enq = await api("POST", "/v1/jobs", { type, payload: {}, scope, delayMs: 1_000 });
    expect(enq.status).toBe(201);
    await named.flushCatalog();
    expect(await catalogRow(home, type)).toMatchObject({ pending: 0, scheduled: 1 });

    const cold = await restartCold(env.SCOPE, named);
    clock.set(T0 + 2_000);
    await runInDurableObject(cold, (o: ScopeDO) => {
      o.clock = clock;
    });
    expect(await runDurableObjectAlarm(cold)).toBe(true);

    expect(await catalogRow(home, type)).toMatchObject({ pending: 1, scheduled: 0 });
    const claimed = await api("POST", "/v1/claim", { worker: "w", types: [type] });
    expect(claimed.body.jobs.map((j: { id: string }) => j.id)).toEqual([enq.body.job.id]);
  });

  it("keeps serializing by scope: it still knows it is a scope object", async () => {
    const home = scopeHome(uniqueScope("serial")).name;
    const named = env.SCOPE.getByName(home);
    expect(await runInDurableObject(named, (o: ScopeDO) => o.store.scoped)).toBe(true);
    const cold = await restartCold(env.SCOPE, named);
    expect(await runInDurableObject(cold, (o: ScopeDO) => [o.store.scoped, o.home])).toEqual([true, home]);
  });

  it("dispatches a delayed pushed job, and the catalog hears that it completed", async () => {
    const clock = new ManualClock(T0);
    const scope = uniqueScope("push");
    const home = scopeHome(scope).name;
    const named = env.SCOPE.getByName(home);
    await runInDurableObject(named, (o: ScopeDO) => {
      o.clock = clock;
    });
    const enq = await api("POST", "/v1/jobs", { type: "test.span", payload: {}, scope, delayMs: 1_000 });
    expect(enq.status).toBe(201);

    const cold = await restartCold(env.SCOPE, named);
    clock.set(T0 + 2_000);
    await runInDurableObject(cold, (o: ScopeDO) => {
      o.clock = clock;
    });
    await runDurableObjectAlarm(cold);
    await cold.drain();
    await cold.flushCatalog();
    expect(await catalogRow(home, "test.span")).toMatchObject({ pending: 0, scheduled: 0, running: 0, completed: 1 });
  });
});

describe("the other objects woken cold by their alarm", () => {
  it("a pool frees a lapsed permit, and keeps its name for its log lines", async () => {
    const name = `pool:cold:${crypto.randomUUID()}`;
    const named = env.POOL.getByName(name);
    const clock = new ManualClock(T0);
    await runInDurableObject(named, (o: PoolDO) => {
      o.clock = clock;
    });
    const waiter = scopeHome(uniqueScope("waiter")).name;
    const limits = { concurrency: 1, ratePerMinute: null };
    const base = { type: "t", cost: 1, rateCost: 0, limits, excludeTypes: [] };
    expect((await named.acquire({ ...base, holder: "dies", want: 1, ttlMs: 1_000 })).permits).toHaveLength(1);
    expect((await named.acquire({ ...base, holder: waiter, want: 1, ttlMs: 1_000 })).permits).toHaveLength(0);

    const cold = await restartCold(env.POOL, named);
    clock.set(T0 + 1_000);
    await runInDurableObject(cold, (o: PoolDO) => {
      o.clock = clock;
    });
    expect(await runDurableObjectAlarm(cold)).toBe(true);
    const s = await cold.status(limits);
    expect(s.active).toBe(0);
    expect(await runInDurableObject(cold, (_o: PoolDO, state) => state.storage.kv.get("edgequeue:name"))).toBe(name);
  });

  it("the schedule object fires a due schedule, and still syncs the config's schedules", async () => {
    const name = "schedules";
    const named = env.SCHEDULE.getByName(name);
    const clock = new ManualClock(T0);
    await runInDurableObject(named, (o: ScheduleDO) => {
      o.clock = clock;
    });
    const type = uniqueType("cold-sched");
    const put = await named.put("cold", { type, everyMs: 60_000 });
    expect(put.ok).toBe(true);
    // A config schedule lost meanwhile comes back only if the cold instance knows it is `schedules`.
    await runInDurableObject(named, (_o: ScheduleDO, state) => state.storage.sql.exec("DELETE FROM schedule WHERE source = 'config'"));

    const cold = await restartCold(env.SCHEDULE, named);
    clock.set(T0 + 61_000);
    await runInDurableObject(cold, (o: ScheduleDO) => {
      o.clock = clock;
    });
    expect(await runDurableObjectAlarm(cold)).toBe(true);
    const names = await runInDurableObject(cold, async (o: ScheduleDO) => (await o.list()).map((s) => s.name));
    expect(names).toContain("demo-every-5-minutes");
    const fired = await api("GET", `/v1/jobs?type=${type}`);
    expect(fired.body.items).toHaveLength(1);
  });

  it("the catalog (it has no alarm) answers a cold instance as it did before", async () => {
    const home = scopeHome(uniqueScope("cat")).name;
    await catalogOf(home).report({ home, at: T0, types: [{ type: "cat.t", pending: 1, scheduled: 0, running: 0, completed: 0, failed: { retries_exhausted: 0, fatal: 0, stalled: 0, timeout: 0 }, cancelled: 0, nextRunAt: T0 }] });
    const cold = await restartCold(env.CATALOG, catalogOf(home));
    expect(await runInDurableObject(cold, (o: CatalogDO) => o.stats("cat.t"))).toMatchObject({ pending: 1 });
  });
});
