import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { JOB_CLAIM_CANDIDATES, JOB_NEXT_PENDING_PRIORITY_BELOW, JOB_TOP_PENDING_PRIORITY } from "../../src/scope/jobs/claim";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob, row, T0, put } from "../helpers/scope";

const claimReq = (limit = 1, types: string[] | null = null) => ({ worker: "w", types, limit, leaseMs: 30_000 });

describe("claim (scope object)", () => {
  it("orders by priority desc, then runAt, then enqueue order", async () => {
    const { home, stub } = await freshScope();
    const jobs = [
      newJob(home, { id: "low-early", priority: 0, runAt: T0 - 3000 }),
      newJob(home, { id: "high-late", priority: 5, runAt: T0 - 1000 }),
      newJob(home, { id: "high-early", priority: 5, runAt: T0 - 2000 }),
      newJob(home, { id: "low-early-2", priority: 0, runAt: T0 - 3000 }),
      newJob(home, { id: "future", priority: 9, runAt: T0 + 1 }),
    ];
    await put(stub, jobs);
    const claimed = await scopeRpc(stub).claim(claimReq(10));
    expect(claimed.map((r) => r.id.split(".")[1])).toEqual(["high-early", "high-late", "low-early", "low-early-2"]);
  });

  it("merges types in one object into the same order, and filters by type", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [
      newJob(home, { id: "a1", type: "a", priority: 1 }),
      newJob(home, { id: "b1", type: "b", priority: 3 }),
      newJob(home, { id: "a2", type: "a", priority: 2 }),
    ]);
    expect((await scopeRpc(stub).claim(claimReq(1, ["a"])))[0]!.id).toContain(".a2");
    expect((await scopeRpc(stub).claim(claimReq(5))).map((r) => r.id.split(".")[1])).toEqual(["b1", "a1"]);
  });

  it("leases: running, attempts + 1, token, expiry, worker", async () => {
    const { home, stub } = await freshScope();
    const [e] = await put(stub, [newJob(home)]);
    const [c] = await scopeRpc(stub).claim({ worker: "w7", types: null, limit: 1, leaseMs: 45_000 });
    expect(c).toMatchObject({ id: e!.row.id, state: "running", attempts: 1, leaseExpiresAt: T0 + 45_000, startedAt: T0 });
    expect((await row(stub, c!.id)).lease_owner).toBe("w7");
    expect(c!.leaseToken).toMatch(/^[0-9a-f]{32}$/);
  });

  it("caps the lease at startedAt + timeoutMs", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { timeoutMs: 5000 })]);
    const [c] = await scopeRpc(stub).claim(claimReq());
    expect(c!.leaseExpiresAt).toBe(T0 + 5000);
  });

  it("50 parallel claims over 20 jobs never return one job twice", async () => {
    const { home, stub } = await freshScope();
    await put(stub, Array.from({ length: 20 }, () => newJob(home)));
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => scopeRpc(stub).claim(claimReq(1 + (i % 3)))));
    const ids = results.flat().map((r) => r.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    const tokens = results.flat().map((r) => r.leaseToken);
    expect(new Set(tokens).size).toBe(20);
    for (const id of ids) expect((await row(stub, id)).attempts).toBe(1);
  });

  it("reads job_claim_idx by seeks only, with no sort step", async () => {
    const { home, stub } = await freshScope();
    await put(stub, Array.from({ length: 50 }, (_, i) => newJob(home, { priority: i % 4 })));
    const plans = await runInDurableObject(stub, (_o: ScopeDO, state) => {
      const plan = (q: string, ...args: unknown[]) =>
        state.storage.sql.exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${q}`, ...(args as never[])).toArray().map((r) => r.detail).join(" | ");
      return [
        plan(JOB_CLAIM_CANDIDATES, "test.job", 2, T0, 10),
        plan(JOB_TOP_PENDING_PRIORITY, "test.job"),
        plan(JOB_NEXT_PENDING_PRIORITY_BELOW, "test.job", 3),
      ];
    });
    expect(plans[0]).toMatch(/USING COVERING INDEX job_claim_idx \(type=\? AND priority=\? AND run_at<\?\)/);
    expect(plans[1]).toMatch(/USING COVERING INDEX job_claim_idx \(type=\?\)/);
    expect(plans[2]).toMatch(/USING COVERING INDEX job_claim_idx \(type=\? AND priority<\?\)/);
    for (const p of plans) expect(p).not.toMatch(/TEMP B-TREE/);
  });

  it("skips a priority level that holds only future jobs", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [
      ...Array.from({ length: 30 }, () => newJob(home, { priority: 9, runAt: T0 + 60_000 })),
      newJob(home, { id: "due-low", priority: 1 }),
    ]);
    const [c] = await scopeRpc(stub).claim(claimReq(1, ["test.job", "test.job"]));
    expect(c!.id).toContain(".due-low");
  });
});
