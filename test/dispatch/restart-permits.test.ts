/**
 * Pushed attempts' permits after a restart of their scope object (docs/design.md "Restart"): the dead instance's
 * permits are dropped by the pools they came from, so the jobs it held run again at once, not when the permits
 * lapse a minute later; and a key value's pool object after a restart: the registry hears it is empty, and an idle
 * object evicted between its alarms still deletes its storage. Alarms fired with runDurableObjectAlarm, no sleeps.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock";
import type { PoolDO } from "../../src/pool/pool-do";
import { KEY_IDLE_KEEP_MS, KeyReporter } from "../../src/pool/key-registry";
import type { ScopeDO } from "../../src/scope/scope-do";
import { env, freshScope, newJob, put, restartCold, rows, T0, useClock } from "../helpers/scope";

async function running(stub: DurableObjectStub<ScopeDO>): Promise<number> {
  return (await rows(stub)).filter((r) => r.state === "running").length;
}

describe("a scope object restarted while its pushed calls held permits", () => {
  for (const c of [
    { type: "demo.tenant", limit: 2, pool: (k: string) => `pool:type:demo.tenant#${k}` },
    { type: "demo.single", limit: 1, pool: (_k: string) => "pool:type:demo.single" },
  ]) {
    it(`${c.type}: the released orphans run again at once (their permits went back)`, async () => {
      const { home, stub } = await freshScope(null); // the real clock: a restarted instance starts on it
      const tenant = crypto.randomUUID();
      const payload = JSON.stringify({ tenant, ms: 20_000 });
      await put(stub, Array.from({ length: c.limit + 1 }, () => newJob(home, { type: c.type, payload, limitKey: c.type === "demo.tenant" ? tenant : null })));
      await stub.poke(); // awaits the fill: the calls are out
      expect(await running(stub)).toBe(c.limit);
      const pool = env.POOL.getByName(c.pool(tenant));
      const limits = { concurrency: c.limit, ratePerMinute: null };
      expect((await pool.status(limits)).active).toBe(c.limit);

      // The runtime restarts the object: its calls and its in-memory permit ledger are gone.
      const cold = await restartCold(env.SCOPE, stub);
      await runDurableObjectAlarm(cold); // armed for now by start(): the fill asks the pool again
      await cold.poke(); // and once more, past any back-off

      // Before: 0 running, and the pool still counted the dead instance's permits (until 2 × leaseMs = 60 s).
      const after = { running: await running(cold), active: (await pool.status(limits)).active };
      expect(after).toEqual({ running: c.limit, active: c.limit });
    });
  }
});

describe("a key value's pool object and the registry", () => {
  it("KeyReporter of a fresh instance sends zeros when forced (the registry may hold an old row)", () => {
    expect(new KeyReporter().take({ active: 0, waiting: 0 }, T0, true)).toEqual({ active: 0, waiting: 0 });
  });

  it("a permit that lapses after a restart of the key object leaves the registry row", async () => {
    const base = `pool:type:test.keyed.${crypto.randomUUID().slice(0, 8)}`;
    const key = "tenant-a";
    const pool = env.POOL.getByName(`${base}#${key}`);
    const clock = new ManualClock(T0);
    await runInDurableObject(pool, (o: PoolDO) => {
      o.clock = clock;
    });
    const limits = { concurrency: 2, ratePerMinute: null };
    const g = await pool.acquire({ holder: "scope:Test:x", type: "t", want: 1, cost: 1, rateCost: 0, ttlMs: 1_000, limits, excludeTypes: [] });
    expect(g.permits).toHaveLength(1);
    const registry = () => env.POOL.getByName(base).keys(null, 10);
    await vi.waitFor(async () => expect((await registry()).keys).toMatchObject([{ key, active: 1 }]));

    // The holder dies (its release is lost); the key object restarts before the permit lapses.
    const cold = await restartCold(env.POOL, pool);
    await runInDurableObject(cold, (o: PoolDO) => {
      o.clock = clock;
    });
    clock.set(T0 + 1_000);
    expect(await runDurableObjectAlarm(cold)).toBe(true); // tidy: the permit lapses, nothing is held
    expect((await cold.status(limits)).active).toBe(0);
    // Idle a minute: the object deletes its storage, with a forced last report.
    clock.set(T0 + 1_000 + KEY_IDLE_KEEP_MS);
    await runDurableObjectAlarm(cold);
    await runDurableObjectAlarm(cold);
    const left = await runInDurableObject(cold, async (_o: PoolDO, state) => ({
      alarm: await state.storage.getAlarm(),
      tables: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'").one().n,
    }));
    // Before: the registry kept {key, active: 1} for good.
    await vi.waitFor(async () => expect((await registry()).keys).toEqual([]), { timeout: 2_000 });
    expect(left).toEqual({ alarm: null, tables: 0 });
  });

  it("an idle key object whose instance is evicted between alarms still deletes its storage", async () => {
    const pool = env.POOL.getByName(`pool:type:test.keyed.${crypto.randomUUID().slice(0, 8)}#k`);
    const clock = new ManualClock(T0);
    await runInDurableObject(pool, (o: PoolDO) => {
      o.clock = clock;
    });
    const limits = { concurrency: 2, ratePerMinute: null };
    const g = await pool.acquire({ holder: "scope:Test:x", type: "t", want: 1, cost: 1, rateCost: 0, ttlMs: 10_000, limits, excludeTypes: [] });
    clock.set(T0 + 2_000); // past the report rate limit: the idle report goes at once
    await pool.release(g.permits); // idle from T0 + 2 s: storage goes at T0 + 62 s
    const alarm = (s: typeof pool) => runInDurableObject(s, (_o: PoolDO, state) => state.storage.getAlarm());
    expect(await alarm(pool)).toBe(T0 + 2_000 + KEY_IDLE_KEEP_MS);
    // Evicted while idle (wrangler dev evicts an idle object long before a minute passes).
    const cold = await restartCold(env.POOL, pool);
    await runInDurableObject(cold, (o: PoolDO) => {
      o.clock = clock;
    });
    clock.set(T0 + 2_000 + KEY_IDLE_KEEP_MS);
    await runDurableObjectAlarm(cold);
    // Before: the cold instance started the idle minute again (idleSince is in memory): alarm at +60 s, for ever.
    expect(await alarm(cold)).toBeNull();
  });
});
