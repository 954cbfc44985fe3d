/**
 * PermitLedger alone (src/dispatch/permit-ledger.ts), over fake pools and fake
 * timers: releases coalesced per pool (and per refund) within a tick, renewals
 * grouped per pool at the longest TTL asked, permits a pool no longer holds
 * reported, and a pool that fails or never answers logged, never thrown.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { PermitLedger } from "../../src/dispatch/permit-ledger";
import { POOL_CALL_TIMEOUT_MS, type PermitStep, type PoolApi } from "../../src/pool/permit-plan";

type Grant = Awaited<ReturnType<PoolApi["acquire"]>>;

/** FakePool: records every call; acquire answers from `grants` (in order), renew from `gone`. */
class FakePool implements PoolApi {
  acquired: { want: number; holder: string; ttlMs: number }[] = [];
  releases: { ids: string[]; refund: boolean }[] = [];
  renewals: { ids: string[]; ttlMs: number }[] = [];
  grants: Grant[] = [];
  gone: string[] = [];
  fail: "release" | "renew" | null = null;
  hang = false;
  constructor(readonly name: string) {}
  async acquire(req: Parameters<PoolApi["acquire"]>[0]): Promise<Grant> {
    this.acquired.push({ want: req.want, holder: req.holder, ttlMs: req.ttlMs });
    return this.grants.shift() ?? { permits: [], retryAfterMs: 1_000, blockedBy: "concurrency" };
  }
  async renew(ids: string[], ttlMs: number): Promise<string[]> {
    this.renewals.push({ ids, ttlMs });
    if (this.hang) return new Promise<never>(() => undefined);
    if (this.fail === "renew") throw new Error("pool down");
    return this.gone.filter((id) => ids.includes(id));
  }
  async release(ids: string[], refund = false): Promise<void> {
    this.releases.push({ ids, refund });
    if (this.hang) return new Promise<never>(() => undefined);
    if (this.fail === "release") throw new Error("pool down");
  }
}

function ledger(...names: string[]) {
  const pools = new Map(names.map((n) => [n, new FakePool(n)]));
  const kept: Promise<unknown>[] = [];
  const l = new PermitLedger((n) => pools.get(n)!, (p) => kept.push(p));
  return { l, pool: (n: string) => pools.get(n)!, kept };
}

const step = (pool: string): PermitStep => ({ pool, request: { type: "t", excludeTypes: [], cost: 1, rateCost: 0, limits: { concurrency: 2, ratePerMinute: null } }, what: `pool ${pool}` });
const grant = (...permits: string[]): Grant => ({ permits, retryAfterMs: 0, blockedBy: null });

describe("PermitLedger.release", () => {
  let error: MockInstance<(...args: unknown[]) => void>;
  beforeEach(() => {
    vi.useFakeTimers();
    error = vi.spyOn(console, "error").mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.useRealTimers();
    error.mockRestore();
  });

  it("releases of one tick go to each pool as one call, releases and refunds apart", async () => {
    const { l, pool, kept } = ledger("p", "q");
    l.release("p", ["a"]);
    l.release("p", ["b", "c"]);
    l.release("p", ["r"], true);
    l.release("q", ["x"]);
    expect(pool("p").releases).toEqual([]); // nothing until the tick ends
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("p").releases).toEqual([
      { ids: ["a", "b", "c"], refund: false },
      { ids: ["r"], refund: true },
    ]);
    expect(pool("q").releases).toEqual([{ ids: ["x"], refund: false }]);
    expect(kept).toHaveLength(3); // each call is kept alive past the event
  });

  it("a release after the flush starts the next batch", async () => {
    const { l, pool } = ledger("p");
    l.release("p", ["a"]);
    await vi.advanceTimersByTimeAsync(0);
    l.release("p", ["b"]);
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("p").releases.map((r) => r.ids)).toEqual([["a"], ["b"]]);
  });

  it("no ids, no call", async () => {
    const { l, pool, kept } = ledger("p");
    l.release("p", []);
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("p").releases).toEqual([]);
    expect(kept).toEqual([]);
  });

  it("the ids are copied: the caller may reuse its array", async () => {
    const { l, pool } = ledger("p");
    const ids = ["a"];
    l.release("p", ids);
    ids.push("not-released");
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("p").releases).toEqual([{ ids: ["a"], refund: false }]);
  });

  it("a pool that fails a release is logged, and the kept promise still resolves", async () => {
    const { l, pool, kept } = ledger("p");
    pool("p").fail = "release";
    l.release("p", ["a"]);
    await vi.advanceTimersByTimeAsync(0);
    await expect(Promise.all(kept)).resolves.toBeDefined();
    expect(error.mock.calls.map((c) => JSON.parse(String(c[0])))).toEqual([expect.objectContaining({ event: "pool:release_failed", pool: "p" })]);
  });

  it("a pool that never answers a release is given up after POOL_CALL_TIMEOUT_MS", async () => {
    const { l, pool, kept } = ledger("p");
    pool("p").hang = true;
    l.release("p", ["a"]);
    await vi.advanceTimersByTimeAsync(POOL_CALL_TIMEOUT_MS - 1);
    expect(error).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all(kept);
    expect(error.mock.calls.map((c) => JSON.parse(String(c[0])))).toEqual([expect.objectContaining({ event: "pool:release_failed", pool: "p" })]);
  });
});

describe("PermitLedger.renew", () => {
  let warn: MockInstance<(...args: unknown[]) => void>;
  let error: MockInstance<(...args: unknown[]) => void>;
  beforeEach(() => {
    vi.useFakeTimers();
    warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    error = vi.spyOn(console, "error").mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.useRealTimers();
    warn.mockRestore();
    error.mockRestore();
  });

  it("one call per pool, at the longest TTL of its permits (each must outlive its own job's lease)", async () => {
    const { l, pool } = ledger("p", "q");
    const lost = await l.renew([
      { permit: { pool: "p", id: "a" }, ttlMs: 2_000 },
      { permit: { pool: "q", id: "x" }, ttlMs: 500 },
      { permit: { pool: "p", id: "b" }, ttlMs: 10_000 },
      { permit: { pool: "p", id: "c" }, ttlMs: 4_000 },
    ]);
    expect(lost).toEqual([]);
    expect(pool("p").renewals).toEqual([{ ids: ["a", "b", "c"], ttlMs: 10_000 }]);
    expect(pool("q").renewals).toEqual([{ ids: ["x"], ttlMs: 500 }]);
    expect(warn).not.toHaveBeenCalled();
  });

  it("answers with the permits the pools no longer held, and logs their count per pool", async () => {
    const { l, pool } = ledger("p", "q");
    pool("p").gone = ["b"];
    pool("q").gone = ["x", "y"];
    const lost = await l.renew([
      { permit: { pool: "p", id: "a" }, ttlMs: 1_000 },
      { permit: { pool: "p", id: "b" }, ttlMs: 1_000 },
      { permit: { pool: "q", id: "x" }, ttlMs: 1_000 },
      { permit: { pool: "q", id: "y" }, ttlMs: 1_000 },
    ]);
    expect(lost).toEqual([
      { pool: "p", id: "b" },
      { pool: "q", id: "x" },
      { pool: "q", id: "y" },
    ]);
    expect(warn.mock.calls.map((c) => JSON.parse(String(c[0])))).toEqual([
      { event: "pool:permits_lost", pool: "p", count: 1 },
      { event: "pool:permits_lost", pool: "q", count: 2 },
    ]);
  });

  it("a pool that fails is logged and its permits are not counted lost; the other pools are still renewed", async () => {
    const { l, pool } = ledger("p", "q");
    pool("p").fail = "renew";
    pool("q").gone = ["x"];
    const lost = await l.renew([
      { permit: { pool: "p", id: "a" }, ttlMs: 1_000 },
      { permit: { pool: "q", id: "x" }, ttlMs: 1_000 },
    ]);
    expect(lost).toEqual([{ pool: "q", id: "x" }]);
    expect(error.mock.calls.map((c) => JSON.parse(String(c[0])))).toEqual([expect.objectContaining({ event: "pool:renew_failed", pool: "p" })]);
  });

  it("a pool that never answers does not hold up the other pools' renewals, and is given up after POOL_CALL_TIMEOUT_MS", async () => {
    const { l, pool } = ledger("p", "q");
    pool("p").hang = true;
    pool("q").gone = ["x"];
    let lost: unknown = null;
    void l.renew([
      { permit: { pool: "p", id: "a" }, ttlMs: 2_000 },
      { permit: { pool: "q", id: "x" }, ttlMs: 2_000 },
    ]).then((x) => (lost = x));
    // q's permits live 2 s: its renewal cannot wait the 10 s p may take.
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("q").renewals).toEqual([{ ids: ["x"], ttlMs: 2_000 }]);
    await vi.advanceTimersByTimeAsync(POOL_CALL_TIMEOUT_MS - 1);
    expect(lost).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(lost).toEqual([{ pool: "q", id: "x" }]);
    expect(error.mock.calls.map((c) => JSON.parse(String(c[0])))).toEqual([expect.objectContaining({ event: "pool:renew_failed", pool: "p" })]);
  });

  it("nothing to renew, no call", async () => {
    const { l, pool } = ledger("p");
    expect(await l.renew([])).toEqual([]);
    expect(pool("p").renewals).toEqual([]);
  });
});

describe("PermitLedger.take", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("takes every step of the plan for the holder, at the TTL asked", async () => {
    const { l, pool } = ledger("p", "q");
    pool("p").grants = [grant("p1", "p2")];
    pool("q").grants = [grant("q1", "q2")];
    const taken = await l.take([step("p"), step("q")], { holder: "scope:Tenant:a", want: 2, ttlMs: 60_000 });
    expect(taken).toEqual({ ok: true, count: 2, held: [{ pool: "p", ids: ["p1", "p2"] }, { pool: "q", ids: ["q1", "q2"] }] });
    expect(pool("p").acquired).toEqual([{ want: 2, holder: "scope:Tenant:a", ttlMs: 60_000 }]);
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("p").releases).toEqual([]);
  });

  it("a smaller grant trims what earlier steps took; the trimmed permits go back refunded, through the coalesced release", async () => {
    const { l, pool } = ledger("p", "q");
    pool("p").grants = [grant("p1", "p2", "p3")];
    pool("q").grants = [grant("q1")];
    const taken = await l.take([step("p"), step("q")], { holder: "h", want: 3, ttlMs: 1_000 });
    expect(taken).toEqual({ ok: true, count: 1, held: [{ pool: "p", ids: ["p1"] }, { pool: "q", ids: ["q1"] }] });
    expect(pool("q").acquired[0]!.want).toBe(3);
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("p").releases).toEqual([{ ids: ["p2", "p3"], refund: true }]);
  });

  it("a refused step gives back everything the earlier steps granted, refunded, and says why and when to ask again", async () => {
    const { l, pool } = ledger("p", "q");
    pool("p").grants = [grant("p1", "p2")];
    pool("q").grants = [{ permits: [], retryAfterMs: 4_000, blockedBy: "concurrency" }];
    const taken = await l.take([step("p"), step("q")], { holder: "h", want: 2, ttlMs: 1_000 });
    expect(taken).toEqual({ ok: false, retryAfterMs: 4_000, why: "pool q is full", pool: "q" });
    await vi.advanceTimersByTimeAsync(0);
    expect(pool("p").releases).toEqual([{ ids: ["p1", "p2"], refund: true }]);
  });
});
