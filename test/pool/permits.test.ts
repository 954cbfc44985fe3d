/**
 * PoolDO permits: occupancy is the count of unexpired permits, so a dead
 * holder frees its slots when they lapse; freed slots go to the holders that
 * have waited longest.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock";
import type { PoolDO } from "../../src/pool/pool-do";
import { acquire, activeCount, expire, release, renew } from "../../src/pool/permits";
import { env, T0 } from "../helpers/scope";

function freshPool() {
  return env.POOL.getByName(`pool:test:${crypto.randomUUID()}`);
}

describe("pool permits", () => {
  it("grants up to the limit, and tells the holder when to try again", async () => {
    const pool = freshPool();
    const out = await runInDurableObject(pool, (_o: PoolDO, state) => {
      const sql = state.storage.sql;
      const a = acquire(sql, "h1", 2, 3, 10_000, T0);
      const b = acquire(sql, "h2", 5, 3, 10_000, T0);
      const c = acquire(sql, "h3", 1, 3, 10_000, T0 + 100);
      return { a: a.permits.length, b: b.permits.length, c, active: activeCount(sql) };
    });
    expect(out).toMatchObject({ a: 2, b: 1, active: 3 });
    expect(out.c.permits).toEqual([]);
    expect(out.c.retryAfterMs).toBe(5_000); // capped: the next expiry is 9.9 s away, a release will wake it sooner
  });

  it("a killed holder's slot frees itself when its permit lapses, and goes to the longest waiter", async () => {
    const pool = freshPool();
    const woken = await runInDurableObject(pool, (_o: PoolDO, state) => {
      const sql = state.storage.sql;
      acquire(sql, "dies", 1, 1, 1_000, T0);
      acquire(sql, "waits-first", 1, 1, 1_000, T0 + 10);
      acquire(sql, "waits-second", 1, 1, 1_000, T0 + 20);
      expect(expire(sql, T0 + 999)).toEqual([]);
      return expire(sql, T0 + 1_000);
    });
    expect(woken).toEqual(["waits-first"]);
  });

  it("renew keeps permits alive and reports the ones already gone; release wakes one waiter per slot", async () => {
    const pool = freshPool();
    const out = await runInDurableObject(pool, (_o: PoolDO, state) => {
      const sql = state.storage.sql;
      const { permits } = acquire(sql, "h", 2, 2, 1_000, T0);
      acquire(sql, "w1", 1, 2, 1_000, T0 + 1);
      acquire(sql, "w2", 1, 2, 1_000, T0 + 2);
      const lost = renew(sql, [...permits, "gone"], 5_000, T0 + 500);
      const active = activeCount(sql);
      const woken = release(sql, permits, T0 + 600);
      return { lost, active, woken, after: activeCount(sql) };
    });
    expect(out).toEqual({ lost: ["gone"], active: 2, woken: ["w1", "w2"], after: 0 });
  });

  it("the pool's alarm expires permits at their time", async () => {
    const pool = freshPool();
    const clock = new ManualClock(T0);
    await runInDurableObject(pool, (o: PoolDO) => {
      o.clock = clock;
    });
    await pool.acquire("scope:Test:nobody", 1, 1, 1_000);
    expect(await runInDurableObject(pool, (_o: PoolDO, state) => state.storage.getAlarm())).toBe(T0 + 1_000);
    clock.advance(1_000);
    await runDurableObjectAlarm(pool);
    expect(await pool.active()).toBe(0);
    expect(await runInDurableObject(pool, (_o: PoolDO, state) => state.storage.getAlarm())).toBeNull();
  });
});
