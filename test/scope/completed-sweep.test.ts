/**
 * Completed jobs have no job_finished_idx entry; their retention sweep walks the table in seq order
 * (scope/retention/completed-sweep.ts, docs/design.md "What a job costs"): it deletes them on time, passes over the
 * jobs still live or kept longer, goes on where a full pass stopped, and a cold instance sweeps what it
 * never saw finish.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { scopeRpc } from "../helpers/scope";
import type { ScopeDO } from "../../src/scope/scope-do";
import { RETENTION_WAKE_COLUMNS, sweepAtOf, sweepOnce } from "../../src/scope/retention/sweep-pass";
import { payCounts } from "../../src/scope/jobs/tallies";
import { Retention } from "../../src/scope/retention/retention";
import { alarmAt, env, freshScope, newJob, partsOf, restartCold, rows, T0, useClock } from "../helpers/scope";
import { ManualClock } from "../../src/clock";

/** swept: what the instance knows of its completed jobs' retention (the retention capability's own). */
const swept = (o: ScopeDO) => partsOf(o).find(Retention).completed;

const DAY = 86_400_000;
const lease = (limit: number) => ({ worker: "w", types: ["test.job"], limit, leaseMs: 30_000 });
/** The ids job_finished_idx holds. */
const INDEXED = "SELECT id FROM job INDEXED BY job_finished_idx WHERE finished_at IS NOT NULL AND state <> 'completed' AND state IN ('completed', 'failed', 'cancelled', 'superseded')";

async function finish(stub: DurableObjectStub<ScopeDO>, home: string, completed: number, failed: number) {
  const out = await scopeRpc(stub).enqueue([
    ...Array.from({ length: completed }, () => newJob(home, { ownId: false, idFromQueue: true })),
    ...Array.from({ length: failed }, () => newJob(home, { ownId: false, idFromQueue: true, maxAttempts: 1 })),
  ]);
  if (!out.ok) throw new Error(out.message);
  const leased = await scopeRpc(stub).claim(lease(completed + failed));
  for (const [i, j] of leased.entries()) {
    if (i < completed) await scopeRpc(stub).complete(j.id, j.leaseToken!, null);
    else await scopeRpc(stub).fail(j.id, j.leaseToken!, { error: "no" });
  }
  return leased.map((j) => j.id);
}

describe("the sweep of completed jobs", () => {
  it("a sweep's deletes still owed to the counts set no later sweep for jobs that are gone (no alarm on an idle object)", async () => {
    const { home, stub } = await freshScope();
    await finish(stub, home, 1, 0);
    const got = await runInDurableObject(stub, (o: ScopeDO) => {
      const store = partsOf(o).store;
      payCounts(store); // type_count says 1 completed
      const now = T0 + DAY + 1;
      const swept1 = sweepOnce(store, swept(o), now);
      // The delete is owed, not written: the count row still says 1 (count-debt.ts).
      const owed = store.debt.owedTo("completed");
      const row = store.sql.exec<Record<string, number | null>>(`SELECT ${Object.entries(RETENTION_WAKE_COLUMNS).map(([k, v]) => `${v} AS ${k}`).join(", ")}`).one();
      return { swept1, owed, inRow: row.completed_kept, next: sweepAtOf(store, swept(o), row, now) };
    });
    expect(got).toEqual({ swept1: { deleted: 1, more: false }, owed: -1, inRow: 1, next: null });
  });

  it("a completed job has no finished index entry, a failed one has; each is deleted at its own retention", async () => {
    const { home, stub, clock } = await freshScope();
    const ids = await finish(stub, home, 2, 1);
    const indexed = await runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ id: string }>(INDEXED).toArray().map((r) => r.id));
    expect(indexed).toEqual([ids[2]]);
    // Due exactly at the completion plus the retention (noted when it completed), as the index said.
    expect(await alarmAt(stub)).toBe(T0 + DAY);
    clock!.advance(DAY);
    await runDurableObjectAlarm(stub);
    expect((await rows(stub)).map((r) => r.state)).toEqual(["failed"]);
    expect(await alarmAt(stub)).toBe(T0 + 7 * DAY);
  });

  it("passes over older jobs that are live or kept longer, and deletes the completed ones behind them", async () => {
    const { home, stub, clock } = await freshScope();
    // A delayed job older than all of them, live throughout.
    await scopeRpc(stub).enqueue([newJob(home, { ownId: false, idFromQueue: true, delayMs: 30 * DAY })]);
    await finish(stub, home, 3, 2);
    clock!.advance(60_000);
    await finish(stub, home, 2, 0);
    clock!.advance(DAY - 60_000);
    await runDurableObjectAlarm(stub);
    // The first three completed passed their day; the two a minute younger wait for theirs.
    expect((await rows(stub)).map((r) => r.state).sort()).toEqual(["completed", "completed", "failed", "failed", "pending"]);
    expect(await alarmAt(stub)).toBe(T0 + 60_000 + DAY);
    clock!.advance(60_000);
    await runDurableObjectAlarm(stub);
    expect((await rows(stub)).map((r) => r.state).sort()).toEqual(["failed", "failed", "pending"]);
  });

  it("a full pass goes on where it stopped", async () => {
    const { home, stub, clock } = await freshScope();
    await finish(stub, home, 5, 0);
    const passes = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = clock!.now() + DAY;
      return [sweepOnce(o.store, swept(o), now, 2), sweepOnce(o.store, swept(o), now, 2), sweepOnce(o.store, swept(o), now, 2)];
    });
    expect(passes).toEqual([
      { deleted: 2, more: true },
      { deleted: 2, more: true },
      { deleted: 1, more: false },
    ]);
    expect(await rows(stub)).toEqual([]);
  });

  it("a pass that stops early keeps the due time of a job it passed: the cycle's end is due at it", async () => {
    const { home, stub, clock } = await freshScope();
    const out = await scopeRpc(stub).enqueue(Array.from({ length: 4 }, () => newJob(home, { ownId: false, idFromQueue: true })));
    if (!out.ok) throw new Error(out.message);
    const leased = await scopeRpc(stub).claim({ ...lease(4), leaseMs: 2 * 3_600_000 });
    // The oldest job completes an hour after the three behind it.
    for (const j of leased.slice(1)) await scopeRpc(stub).complete(j.id, j.leaseToken!, null);
    clock!.advance(3_600_000);
    await scopeRpc(stub).complete(leased[0]!.id, leased[0]!.leaseToken!, null);
    const passes = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = T0 + DAY;
      const first = [sweepOnce(o.store, swept(o), now, 2), sweepOnce(o.store, swept(o), now, 2)];
      return { first, later: sweepOnce(o.store, swept(o), T0 + 3_600_000 + DAY, 2) };
    });
    expect(passes.first).toEqual([
      { deleted: 2, more: true },
      { deleted: 1, more: false },
    ]);
    expect(passes.later).toEqual({ deleted: 1, more: false });
    expect(await alarmAt(stub)).toBeNull();
  });

  it("a pass whose delete rolls back leaves the walk where it was: the next pass deletes the jobs", async () => {
    const { home, stub, clock } = await freshScope();
    await finish(stub, home, 3, 0);
    const out = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = clock!.now() + DAY;
      const sql = o.store.sql as unknown as { exec: (q: string, ...a: unknown[]) => unknown };
      const real = sql.exec;
      sql.exec = (q: string, ...a: unknown[]) => {
        if (q.includes("DELETE FROM job WHERE seq IN (SELECT value FROM json_each")) throw new Error("storage failed");
        return real.call(sql, q, ...a);
      };
      const failed = (() => {
        try {
          sweepOnce(o.store, swept(o), now);
          return "no throw";
        } catch (e) {
          return String(e);
        }
      })();
      sql.exec = real;
      return { failed, again: sweepOnce(o.store, swept(o), now) };
    });
    expect(out.failed).toContain("storage failed");
    expect(out.again).toEqual({ deleted: 3, more: false });
  });

  it("a cold instance sweeps the completed jobs it never saw finish", async () => {
    const { home, stub } = await freshScope();
    await finish(stub, home, 2, 0);
    const cold = await restartCold(env.SCOPE, stub);
    await useClock(cold, new ManualClock(T0 + 2 * DAY));
    // It knows of them only from the type's count: it walks at once, and finds both past their retention.
    await runInDurableObject(cold, (o: ScopeDO) => sweepOnce(o.store, swept(o), o.clock.now()));
    expect(await rows(cold)).toEqual([]);
  });
});
