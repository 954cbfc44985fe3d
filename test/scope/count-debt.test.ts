/**
 * Counts paid at the report (docs/design.md "Counts paid at the report", scope/jobs/count-debt.ts): a move that does
 * not change `pending`, of a type that does not run one at a time, is counted in memory and written when the counts
 * are next read — one row for many moves; a transaction that rolls back forgets what it owed; and an instance that
 * dies owing counts again from the job table when the next one starts.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { enqueueJobs } from "../../src/scope/jobs/enqueue";
import { completeMany } from "../../src/scope/jobs/settle";
import { claimJobs } from "../../src/scope/jobs/claim";
import { PUSH_WORKER } from "../../src/scope/jobs/pushed-leases";
import { payCounts } from "../../src/scope/jobs/tallies";
import type { ScopeDO } from "../../src/scope/scope-do";
import { env, freshScope, newJob, restartCold, rows } from "../helpers/scope";
import { rowsWrittenBy } from "../helpers/rows-written";

type Counts = { pending: number; running: number; completed: number };
const COUNTS = "SELECT pending, running, completed FROM type_count WHERE type = 'test.job'";

/** Five test.job jobs (pulled: none go straight) claimed and completed by hand, at `now`. */
function fiveDone(o: ScopeDO, home: string, now: number): void {
  const out = enqueueJobs(o.store, Array.from({ length: 5 }, () => newJob(home)), now);
  if (!out.ok) throw new Error(out.message);
  const leased = claimJobs(o.store, { worker: "w", types: ["test.job"], limit: 5, leaseMs: 30_000 }, now);
  completeMany(o.store, leased.map((r) => ({ id: r.id, token: r.lease_token!, result: null })), now);
}

describe("counts paid at the report", () => {
  it("completions are owed until the counts are read: then one row for all of them", async () => {
    const { home, stub } = await freshScope();
    const got = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = o.clock.now();
      fiveDone(o, home, now);
      const owed = { size: o.store.debt.size, counts: o.store.sql.exec<Counts>(COUNTS).one() };
      const { written } = rowsWrittenBy(o.store.sql, () => payCounts(o.store));
      return { owed, written, after: o.store.sql.exec<Counts>(COUNTS).one(), left: o.store.debt.size };
    });
    // The claim changed `pending`: written with it. The completion did not: owed.
    expect(got.owed).toEqual({ size: 1, counts: { pending: 0, running: 5, completed: 0 } });
    expect(got).toMatchObject({ written: 1, after: { pending: 0, running: 0, completed: 5 }, left: 0 });
    // A summary asked of the object reads them paid.
    const summary = await stub.summary();
    expect(summary.types.find((t) => t.type === "test.job")).toMatchObject({ completed: 5, running: 0 });
  });

  it("a transaction that rolls back forgets what it owed, and one that paid owes it again", async () => {
    const { home, stub } = await freshScope();
    const got = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = o.clock.now();
      fiveDone(o, home, now);
      const before = o.store.debt.size;
      try {
        o.store.atomic(() => {
          completeMany(o.store, [], now);
          o.store.debt.owe({ type: "test.job", at: now, deltas: { completed: 1 }, counters: {} });
          payCounts(o.store);
          throw new Error("roll back");
        });
      } catch {
        // rolled back
      }
      const size = o.store.debt.size;
      payCounts(o.store);
      return { before, size, counts: o.store.sql.exec<Counts>(COUNTS).one() };
    });
    expect(got).toEqual({ before: 1, size: 1, counts: { pending: 0, running: 0, completed: 5 } });
  });

  it("the catalog's mark rolls back with the transaction that wrote it, so the next owing write writes it again", async () => {
    const { stub } = await freshScope();
    const marked = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = o.clock.now();
      const mark = () => o.store.sql.exec("SELECT 1 FROM meta WHERE key = 'catalog_dirty_since'").toArray().length;
      const clean = mark();
      try {
        o.store.atomic(() => {
          o.store.touched(now);
          throw new Error("roll back");
        });
      } catch {
        // rolled back, and the mark with it
      }
      const afterRollback = mark();
      o.store.atomic(() => o.store.touched(now));
      return { clean, afterRollback, after: mark() };
    });
    expect(marked).toEqual({ clean: 0, afterRollback: 0, after: 1 });
  });

  it("an instance that dies owing counts: the next one counts the job table again", async () => {
    const { home, stub } = await freshScope();
    await runInDurableObject(stub, (o: ScopeDO) => {
      fiveDone(o, home, o.clock.now());
      // And a pushed one that stays running, and two pending.
      const out = enqueueJobs(o.store, [newJob(home), newJob(home), newJob(home)], o.clock.now());
      if (!out.ok) throw new Error(out.message);
      claimJobs(o.store, { worker: PUSH_WORKER, types: ["test.job"], limit: 1, leaseMs: 30_000 }, o.clock.now());
    });
    const stale = await runInDurableObject(stub, (_o, state) => state.storage.sql.exec<Counts>(COUNTS).one());
    expect(stale).toEqual({ pending: 2, running: 6, completed: 0 });
    const cold = await restartCold(env.SCOPE, stub);
    // The pushed attempt was given back at the start (orphans.ts): three pending, five completed.
    await vi.waitFor(async () => expect((await rows(cold)).filter((r) => r.state === "pending")).toHaveLength(3));
    const counts = await runInDurableObject(cold, (_o, state) => state.storage.sql.exec<Counts>(COUNTS).one());
    expect(counts).toEqual({ pending: 3, running: 0, completed: 5 });
  });
});
