/** What is due and when to wake, kept while no write and no lapse of time can change it (src/scope/jobs/wake-memo.ts). */
import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dueTypesAmong } from "../../src/scope/jobs/claim";
import type { ScopeDO } from "../../src/scope/scope-do";
import { WakeMemo } from "../../src/scope/jobs/wake-memo";
import { freshScope, newJob, put, T0, readWakeRow } from "../helpers/scope";

describe("WakeMemo", () => {
  it("reads again after a write, and once the clock reaches the next run_at or lease expiry; not otherwise", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type: "t.later", runAt: T0 + 5_000 })]);
    const out = await runInDurableObject(stub, (o: ScopeDO) => {
      let reads = 0;
      const memo = new WakeMemo(o.store.sql, (now) => {
        reads++;
        return readWakeRow(o, now);
      });
      const due = (now: number) => memo.due(now, () => dueTypesAmong(o.store.sql, ["t.later", "t.now"], now));
      const seen: { at: string; due: string[]; reads: number }[] = [];
      const look = (at: string, now: number) => seen.push({ at, due: due(now), reads });
      look("first", T0);
      look("same moment", T0);
      look("later, before run_at", T0 + 4_999);
      look("run_at reached", T0 + 5_000);
      // A write, with the clock where it was: read again.
      o.store.atomic(() => o.store.sql.exec("INSERT INTO meta (key, value) VALUES ('memo-test', '1')"));
      look("after a write", T0 + 5_000);
      return seen;
    });
    expect(out).toEqual([
      { at: "first", due: [], reads: 1 },
      { at: "same moment", due: [], reads: 1 },
      { at: "later, before run_at", due: [], reads: 1 },
      { at: "run_at reached", due: ["t.later"], reads: 2 },
      { at: "after a write", due: ["t.later"], reads: 3 },
    ]);
  });

  it("a live lease bounds what is kept: the row is read again once the lease expires", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type: "t.x" })]);
    const [leased] = await scopeRpc(stub).claim({ worker: "w", types: ["t.x"], limit: 1, leaseMs: 30_000 });
    const out = await runInDurableObject(stub, (o: ScopeDO) => {
      let reads = 0;
      const memo = new WakeMemo(o.store.sql, (now) => {
        reads++;
        return readWakeRow(o, now);
      });
      const lease = memo.wake(T0).lease;
      memo.wake(T0 + 29_999);
      const before = reads;
      memo.wake(T0 + 30_000);
      return { lease, before, after: reads };
    });
    expect(out.lease).toBe(leased!.leaseExpiresAt);
    expect(out).toMatchObject({ before: 1, after: 2 });
  });
});
