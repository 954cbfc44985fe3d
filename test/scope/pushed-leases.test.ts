/**
 * A pushed attempt's lease is held in its object's memory, with no job_lease_idx entry
 * (scope/jobs/pushed-leases.ts, docs/design.md "Storage"): the claim writes one index entry fewer, the alarm and
 * the reap pass still end a lease that runs out, and a one-at-a-time type keeps its entry.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claimJobs } from "../../src/scope/jobs/claim";
import { reapOnce } from "../../src/scope/jobs/reap-pass";
import { PUSH_WORKER, PushedLeases } from "../../src/scope/jobs/pushed-leases";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob } from "../helpers/scope";

const LEASE_MS = 30_000;
/** The ids job_lease_idx holds. */
const INDEXED = "SELECT id FROM job INDEXED BY job_lease_idx WHERE state = 'running' AND lease_kept = 1 AND lease_expires_at > 0";

describe("pushed leases in memory", () => {
  it("a pushed claim writes no lease index entry; its expiry is held, and the reap pass ends it when it runs out", async () => {
    const { home, stub } = await freshScope();
    const out = await runInDurableObject(stub, async (o: ScopeDO) => {
      await o.enqueue([newJob(home, { type: "test.job", maxAttempts: 3 }), newJob(home, { type: "test.job", maxAttempts: 3 })]);
      const now = o.clock.now();
      const sql = o.store.sql as unknown as { exec: (...a: unknown[]) => SqlStorageCursor<Record<string, SqlStorageValue>> };
      const real = sql.exec;
      let written = 0;
      sql.exec = (...a: unknown[]) => {
        const c = real.apply(sql, a);
        queueMicrotask(() => (written += c.rowsWritten));
        return c;
      };
      const pushed = claimJobs(o.store, { worker: PUSH_WORKER, types: ["test.job"], limit: 2, leaseMs: LEASE_MS }, now);
      await Promise.resolve();
      sql.exec = real;
      o.store.pushed.note(pushed);
      const earliest = o.store.pushed.earliest(now);
      const indexed = o.store.sql.exec<{ id: string }>(INDEXED).toArray();
      const early = reapOnce(o.store, now + LEASE_MS - 1);
      const late = reapOnce(o.store, now + LEASE_MS);
      return { now, written, earliest, kept: pushed.map((r) => r.lease_kept), indexed, held: o.store.pushed.size, early: early.rows.length, late: late.rows.map((r) => [r.state, r.attempts]), after: o.store.pushed.size };
    });
    // Two rows and the type's count row: no lease index entries.
    expect(out.written).toBe(3);
    expect(out.kept).toEqual([0, 0]);
    expect(out.earliest).toBe(out.now + LEASE_MS);
    expect(out.indexed).toEqual([]);
    expect(out.early).toBe(0);
    expect(out.late).toEqual([
      ["pending", 1],
      ["pending", 1],
    ]);
    expect(out.after).toBe(0);
  });

  it("a one-at-a-time type and a pull worker keep their lease index entries", async () => {
    const { home, stub } = await freshScope();
    const kept = await runInDurableObject(stub, async (o: ScopeDO) => {
      await o.enqueue([newJob(home, { type: "pull.ordered" }), newJob(home, { type: "test.job" })]);
      const now = o.clock.now();
      const ordered = claimJobs(o.store, { worker: PUSH_WORKER, types: ["pull.ordered"], limit: 1, leaseMs: LEASE_MS }, now);
      const pulled = claimJobs(o.store, { worker: "w", types: ["test.job"], limit: 1, leaseMs: LEASE_MS }, now);
      return { kept: [...ordered, ...pulled].map((r) => r.lease_kept), indexed: o.store.sql.exec(INDEXED).toArray().length };
    });
    expect(kept).toEqual({ kept: [1, 1], indexed: 2 });
  });

  it("memory is safe when early or stale: a renewed lease is held again, an ended job forgotten", () => {
    const leases = new PushedLeases();
    const row = (id: string, state: string, expires: number | null) => ({ id, state, lease_kept: 0, lease_expires_at: expires }) as never;
    leases.note([row("a", "running", 100), row("b", "running", 200)]);
    expect(leases.earliest(0)).toBe(100);
    leases.renewed("a", 300);
    leases.renewed("zzz", 50);
    expect(leases.earliest(0)).toBe(200);
    expect(leases.expired(250)).toEqual(["b"]);
    leases.note([row("b", "completed", null)]);
    expect(leases.expired(1_000)).toEqual(["a"]);
    leases.forget(["a"]);
    expect(leases.size).toBe(0);
  });
});
