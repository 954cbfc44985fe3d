/**
 * Pool permits: occupancy is the summed cost of unexpired permits, so a dead
 * holder frees its slots when they lapse; a rate window never admits more
 * than its budget; a freed slot is kept for the holder that waited longest;
 * an exclusion guard refuses while the other type runs.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock";
import { KEY_IDLE_KEEP_MS, KEY_REPORT_EVERY_MS } from "../../src/pool/key-registry";
import type { PoolDO } from "../../src/pool/pool-do";
import { acquire, release, renew, setLimits, status, tidy, WINDOW_MS, type AcquireRequest } from "../../src/pool/permits";
import { int, seeded } from "../helpers/random";
import { env, T0 } from "../helpers/scope";

const freshPool = () => env.POOL.getByName(`pool:test:${crypto.randomUUID()}`);

function req(holder: string, want: number, over: Partial<AcquireRequest> = {}): AcquireRequest {
  return { holder, want, type: "t", cost: 1, rateCost: 0, ttlMs: 10_000, limits: { concurrency: 3, ratePerMinute: null }, excludeTypes: [], ...over };
}

function inPool<R>(fn: (sql: SqlStorage) => R): Promise<R> {
  return runInDurableObject(freshPool(), (_o: PoolDO, state) => state.storage.transactionSync(() => fn(state.storage.sql)));
}

describe("concurrency", () => {
  it("grants up to the limit by summed cost, and says what blocked the rest", async () => {
    const out = await inPool((sql) => ({
      a: acquire(sql, req("h1", 2), T0).permits.length,
      b: acquire(sql, req("h2", 5), T0).permits.length,
      c: acquire(sql, req("h3", 1), T0 + 100),
      heavy: acquire(sql, req("h4", 1, { cost: 2, limits: { concurrency: 4, ratePerMinute: null } }), T0 + 100).permits.length,
      s: status(sql, { concurrency: 3, ratePerMinute: null }, T0 + 100),
    }));
    expect(out).toMatchObject({ a: 2, b: 1, heavy: 0, s: { active: 3, permits: 3 } });
    expect(out.c).toMatchObject({ permits: [], blockedBy: "concurrency", retryAfterMs: 5_000 });
  });

  it("a killed holder's slot frees itself when its permit lapses, and is kept for the longest waiter", async () => {
    const out = await inPool((sql) => {
      acquire(sql, req("dies", 1, { ttlMs: 1_000, limits: { concurrency: 1, ratePerMinute: null } }), T0);
      acquire(sql, req("waits-first", 1, { limits: { concurrency: 1, ratePerMinute: null } }), T0 + 10);
      acquire(sql, req("waits-second", 1, { limits: { concurrency: 1, ratePerMinute: null } }), T0 + 20);
      const early = tidy(sql, T0 + 999);
      const woken = tidy(sql, T0 + 1_000);
      // The second waiter asks first, but the freed slot is kept for the first.
      const stolen = acquire(sql, req("waits-second", 1, { limits: { concurrency: 1, ratePerMinute: null } }), T0 + 1_001).permits.length;
      const kept = acquire(sql, req("waits-first", 1, { limits: { concurrency: 1, ratePerMinute: null } }), T0 + 1_002).permits.length;
      return { early, woken, stolen, kept };
    });
    expect(out).toEqual({ early: [], woken: ["waits-first"], stolen: 0, kept: 1 });
  });

  it("a slot kept for a holder is used up by whichever of its types takes it", async () => {
    const one = { concurrency: 1, ratePerMinute: null };
    const out = await inPool((sql) => {
      const first = acquire(sql, req("busy", 1, { limits: one }), T0);
      acquire(sql, req("scope", 1, { type: "a", limits: one }), T0 + 1);
      acquire(sql, req("scope", 1, { type: "b", limits: one }), T0 + 2);
      const woken = release(sql, first.permits, false, T0 + 3);
      const viaB = acquire(sql, req("scope", 1, { type: "b", limits: one }), T0 + 4);
      release(sql, viaB.permits, false, T0 + 5);
      // The slot kept for scope's "a" was spent by "b": once b ends, nobody holds a stale reservation.
      const s = status(sql, one, T0 + 6);
      return { woken, granted: viaB.permits.length, reserved: s.waiting.filter((w) => w.reservedUntil !== null && w.holder !== "scope") };
    });
    expect(out).toEqual({ woken: ["scope"], granted: 1, reserved: [] });
  });

  it("a holder served in part goes to the back of the line, so a long backlog cannot keep the head of it", async () => {
    const one = { concurrency: 1, ratePerMinute: null };
    const out = await inPool((sql) => {
      const x = acquire(sql, req("x", 1, { limits: one }), T0);
      acquire(sql, req("big", 10, { limits: one }), T0 + 1); // refused: first in line
      acquire(sql, req("small", 1, { limits: one }), T0 + 2); // refused: second
      release(sql, x.permits, false, T0 + 3); // the slot is kept for big
      const big = acquire(sql, req("big", 10, { limits: one }), T0 + 4); // 1 of 10: big goes to the back
      const woken = release(sql, big.permits, false, T0 + 5);
      return { granted: big.permits.length, woken };
    });
    expect(out).toEqual({ granted: 1, woken: ["small"] });
  });

  it("a kept slot not taken in time goes to the next waiter; a waiter that stops asking leaves the line", async () => {
    const one = { concurrency: 1, ratePerMinute: null };
    const out = await inPool((sql) => {
      const held = acquire(sql, req("h", 1, { limits: one }), T0);
      acquire(sql, req("slow", 1, { limits: one }), T0 + 1);
      acquire(sql, req("next", 1, { limits: one }), T0 + 2);
      const first = release(sql, held.permits, false, T0 + 3); // kept for "slow", which never comes
      const second = tidy(sql, T0 + 3 + 2_000); // its turn lapses: the slot goes to "next", "slow" to the back
      const gone = tidy(sql, T0 + 3 + 60_000); // nobody asked for a minute: the line empties
      return { first, second, left: status(sql, one, T0 + 60_003).waiting.length, gone };
    });
    expect(out).toEqual({ first: ["slow"], second: ["next"], left: 0, gone: [] });
  });

  it("renew keeps permits alive and reports the ones already gone; release wakes one waiter per slot", async () => {
    const out = await inPool((sql) => {
      const { permits } = acquire(sql, req("h", 2, { limits: { concurrency: 2, ratePerMinute: null } }), T0);
      acquire(sql, req("w1", 1, { limits: { concurrency: 2, ratePerMinute: null } }), T0 + 1);
      acquire(sql, req("w2", 1, { limits: { concurrency: 2, ratePerMinute: null } }), T0 + 2);
      const lost = renew(sql, [...permits, "gone"], 5_000, T0 + 500);
      const woken = release(sql, permits, false, T0 + 600);
      return { lost, woken };
    });
    expect(out).toEqual({ lost: ["gone"], woken: ["w1", "w2"] });
  });

  it("a runtime limit overrides the configured one until set back to null", async () => {
    const out = await inPool((sql) => {
      setLimits(sql, { concurrency: 1 });
      const a = acquire(sql, req("h", 3), T0).permits.length;
      setLimits(sql, { concurrency: null });
      const b = acquire(sql, req("h2", 3), T0).permits.length;
      return { a, b };
    });
    expect(out).toEqual({ a: 1, b: 2 });
  });
});

describe("rate window", () => {
  const rated = (holder: string, want: number, rateCost = 1) =>
    req(holder, want, { rateCost, limits: { concurrency: null, ratePerMinute: 30 } });

  it("never admits more than the budget within a window, across a random sequence (injected clock)", async () => {
    const out = await inPool((sql) => {
      const rand = seeded(7);
      const starts: number[] = [];
      let now = T0;
      for (let i = 0; i < 400; i++) {
        now += int(rand, 0, 900);
        const g = acquire(sql, rated(`h${int(rand, 0, 5)}`, int(rand, 1, 4)), now);
        for (const id of g.permits) {
          starts.push(now);
          if (rand() < 0.5) release(sql, [id], false, now + 1); // ending an attempt never gives budget back
        }
      }
      return starts;
    });
    // Fixed windows: each opens at the first start after the previous one closed.
    let windowStart = -Infinity;
    let inWindow = 0;
    for (const t of out) {
      if (t - windowStart >= WINDOW_MS) {
        windowStart = t;
        inWindow = 0;
      }
      inWindow++;
      expect(inWindow).toBeLessThanOrEqual(30);
    }
    expect(out.length).toBeGreaterThan(30);
  });

  it("spends per start (a retry spends again), refunds attempts that never started, and resets after the minute", async () => {
    const out = await inPool((sql) => {
      const first = acquire(sql, rated("a", 20), T0);
      const refunded = release(sql, first.permits.slice(15), true, T0 + 1); // 5 were not claimed
      const second = acquire(sql, rated("b", 20), T0 + 2).permits.length; // 30 - 15 = 15 left
      const blocked = acquire(sql, rated("c", 1), T0 + 3);
      const costly = acquire(sql, rated("d", 1, 31), T0 + WINDOW_MS + 3).permits.length;
      const next = acquire(sql, rated("c", 1), T0 + WINDOW_MS + 4).permits.length;
      return { refunded, second, blocked, costly, next };
    });
    expect(out.second).toBe(15);
    expect(out.blocked).toMatchObject({ permits: [], blockedBy: "rate", retryAfterMs: WINDOW_MS - 3 });
    expect(out.costly).toBe(0);
    expect(out.next).toBe(1);
  });
});

describe("rate (GCRA)", () => {
  const gcra = (holder: string, want: number, rate: { limit: number; periodMs: number; burst: number }, rateCost = 1) =>
    req(holder, want, { rateCost, limits: { concurrency: null, ratePerMinute: null, rate } });

  it("never admits more than `limit` starts in any window of `periodMs` (burst 1), across a random sequence", async () => {
    const rate = { limit: 5, periodMs: 1_000, burst: 1 };
    const out = await inPool((sql) => {
      const rand = seeded(8);
      const starts: number[] = [];
      let now = T0;
      for (let i = 0; i < 600; i++) {
        now += int(rand, 0, 150);
        const g = acquire(sql, gcra(`h${int(rand, 0, 5)}`, int(rand, 1, 4), rate), now);
        for (const id of g.permits) {
          starts.push(now);
          if (rand() < 0.3) release(sql, [id], false, now + 1); // an ended attempt gives nothing back
        }
        if (g.permits.length === 0) expect(g).toMatchObject({ blockedBy: "rate" });
      }
      return starts;
    });
    // A sliding window at every start: never a sixth start within 1,000 ms — no second budget at a boundary.
    for (let i = 5; i < out.length; i++) expect(out[i]! - out[i - 5]!).toBeGreaterThanOrEqual(1_000);
    expect(out.length).toBeGreaterThan(100);
  });

  it("a burst starts that many at once; a refund gives the intervals back; the refusal says when the next fits", async () => {
    const out = await inPool((sql) => {
      const rate = { limit: 10, periodMs: 1_000, burst: 4 };
      const first = acquire(sql, gcra("a", 10, rate), T0);
      const refused = acquire(sql, gcra("b", 1, rate), T0);
      release(sql, first.permits.slice(2), true, T0 + 1); // two never started
      const after = acquire(sql, gcra("b", 10, rate), T0 + 1).permits.length;
      const later = acquire(sql, gcra("c", 10, rate), T0 + 301).permits.length;
      return { first: first.permits.length, refused, after, later };
    });
    expect(out.first).toBe(4);
    expect(out.refused).toMatchObject({ permits: [], blockedBy: "rate", retryAfterMs: 100 });
    expect(out.after).toBe(2);
    expect(out.later).toBe(3);
  });
});

describe("a keyed limit's pool object", () => {
  it("deletes its storage and sets no alarm once nothing in it has counted for a minute; it counts from nothing when asked again", async () => {
    const pool = env.POOL.getByName(`pool:type:test.keyed#${crypto.randomUUID()}`);
    const clock = new ManualClock(T0);
    await runInDurableObject(pool, (o: PoolDO) => {
      o.clock = clock;
    });
    const limits = { concurrency: 2, ratePerMinute: null, rate: { limit: 10, periodMs: 1_000, burst: 1 } };
    const g = await pool.acquire(req("scope:Test:k", 1, { rateCost: 1, limits }));
    expect(g.permits).toHaveLength(1);
    await pool.release(g.permits);
    // The spent rate still counts for 100 ms: kept, and the alarm wakes it then; idle from then, it keeps its tables a
    // minute. Its report of going idle waits for the second after the last one (sent at the acquire).
    const alarm = () => runInDurableObject(pool, (_o: PoolDO, state) => state.storage.getAlarm());
    expect(await alarm()).toBe(T0 + 100);
    clock.advance(100);
    await runDurableObjectAlarm(pool);
    expect(await alarm()).toBe(T0 + KEY_REPORT_EVERY_MS);
    clock.set(T0 + KEY_REPORT_EVERY_MS);
    await runDurableObjectAlarm(pool);
    expect(await alarm()).toBe(T0 + 100 + KEY_IDLE_KEEP_MS);
    clock.set(T0 + 100 + KEY_IDLE_KEEP_MS);
    await runDurableObjectAlarm(pool);
    const left = await runInDurableObject(pool, async (_o: PoolDO, state) => ({
      alarm: await state.storage.getAlarm(),
      tables: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'").one().n,
    }));
    expect(left).toEqual({ alarm: null, tables: 0 });
    // Asked again, it starts from nothing: the rate spaces starts 100 ms apart.
    expect((await pool.acquire(req("scope:Test:k", 2, { rateCost: 1, limits }))).permits).toHaveLength(1);
    expect((await pool.status(limits)).active).toBe(1);
  });
});

describe("exclusion guard (notWhileRunning)", () => {
  it("refuses while a permit of an excluded type is live; presence permits of the other side do not exclude", async () => {
    const out = await inPool((sql) => {
      const none = { concurrency: null, ratePerMinute: null };
      const b = acquire(sql, req("s1", 1, { type: "hydrate", limits: none }), T0);
      const a = acquire(sql, req("s2", 1, { type: "import", limits: none, excludeTypes: ["hydrate"] }), T0);
      const b2 = acquire(sql, req("s3", 1, { type: "hydrate", limits: none }), T0).permits.length;
      release(sql, b.permits, false, T0 + 5);
      const still = acquire(sql, req("s2", 1, { type: "import", limits: none, excludeTypes: ["hydrate"] }), T0 + 6).permits.length;
      return { a, b2, still };
    });
    expect(out.a).toMatchObject({ permits: [], blockedBy: { type: "hydrate" } });
    expect(out.b2).toBe(1);
    expect(out.still).toBe(0); // s3's hydrate is still running
  });
});

describe("the pool object", () => {
  it("its alarm takes back lapsed permits at their time", async () => {
    const pool = freshPool();
    const clock = new ManualClock(T0);
    await runInDurableObject(pool, (o: PoolDO) => {
      o.clock = clock;
    });
    await pool.acquire(req("scope:Test:nobody", 1, { ttlMs: 1_000 }));
    expect(await runInDurableObject(pool, (_o: PoolDO, state) => state.storage.getAlarm())).toBe(T0 + 1_000);
    clock.advance(1_000);
    await runDurableObjectAlarm(pool);
    expect((await pool.status({ concurrency: 3, ratePerMinute: null })).active).toBe(0);
    expect(await runInDurableObject(pool, (_o: PoolDO, state) => state.storage.getAlarm())).toBeNull();
  });
});
