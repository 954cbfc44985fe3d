/**
 * Straight to a handler (docs/design.md "Straight to a handler", scope/push/straight.ts): a new job due now, of a
 * pushed type that needs no permit, is inserted `running` under a lease held in memory, and its call starts once
 * the enqueue commits — one row written for the insert where a pending insert and its claim wrote three (and two
 * count rows, now owed: docs/design.md "Counts paid at the report"). A job that
 * would overtake, or that a guard holds, goes in pending as before; an instance that dies before the call gives it
 * back unspent.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { enqueueJobs } from "../../src/scope/jobs/enqueue";
import { PUSH_WORKER } from "../../src/scope/jobs/pushed-leases";
import { payCounts } from "../../src/scope/jobs/tallies";
import type { JobRow } from "../../src/scope/jobs/job-row";
import type { ScopeDO } from "../../src/scope/scope-do";
import { scopeRpc } from "../helpers/scope";
import { env, freshScope, newJob, partsOf, restartCold, row, rows, type ScopeStub } from "../helpers/scope";
import { rowsWrittenBy } from "../helpers/rows-written";

/** A scope object that knows the paused set (its first sync), as one that has reported does. */
async function knowing(): Promise<{ home: string; stub: ScopeStub }> {
  const { home, stub } = await freshScope(null);
  await runInDurableObject(stub, (o: ScopeDO) => partsOf(o).pause.ensure());
  return { home, stub };
}

describe("straight to a handler", () => {
  it("a job due now of a plain pushed type is inserted running, its lease in memory, and its call completes it", async () => {
    const { home, stub } = await knowing();
    const out = await scopeRpc(stub).enqueue([newJob(home, { type: "demo.noop" })]);
    if (!out.ok) throw new Error(out.message);
    const answered = out.results[0]!.job!;
    expect(answered).toMatchObject({ state: "running", attempts: 1 });
    await vi.waitFor(async () => expect((await row(stub, answered.id)).state).toBe("completed"), { timeout: 10_000, interval: 10 });
    const done = await row(stub, answered.id);
    expect(done).toMatchObject({ attempts: 1, lease_kept: 0, lease_token: null });
    // Its timeline: pending, running, completed — as a claimed job's.
    const timeline = await stub.timeline(answered.id, 50);
    expect(timeline!.steps.map((s) => [s.state, s.attempt])).toEqual([
      ["pending", 0],
      ["running", 1],
      ["completed", 1],
    ]);
  });

  it("its insert writes the row alone — no claim index entry, no claim, its count owed — and the lease is held in memory only", async () => {
    const { home, stub } = await knowing();
    const got = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = Date.now();
      // Warm the type's count row, as a busy type's is.
      enqueueJobs(o.store, [newJob(home, { type: "demo.noop", delayMs: 3_600_000 })], now);
      o.store.sql.exec("DELETE FROM job");
      o.store.sql.exec("UPDATE type_count SET pending = 0");
      // An id the queue made up, made from the seq here (no id index entry), as an enqueue without `id` has.
      const job = newJob(home, { type: "demo.noop", idFromQueue: true, ownId: false });
      // Already dirty for the catalog: its mark is written once per report, not per job.
      o.store.touched(now);
      const { out, written } = rowsWrittenBy(o.store.sql, () => enqueueJobs(o.store, [job], now, { straight: true, seqIds: true }));
      if (!out.ok) throw new Error(out.message);
      const r = out.results[0]!.row as JobRow;
      const indexed = o.store.sql.exec("SELECT seq FROM job INDEXED BY job_claim_idx WHERE state = 'pending' AND held = 0 AND type = 'demo.noop'").toArray().length;
      const owed = o.store.debt.size;
      payCounts(o.store);
      const count = o.store.sql.exec<{ pending: number; running: number }>("SELECT pending, running FROM type_count WHERE type = 'demo.noop'").one();
      return { written, owed, state: r.state, owner: r.lease_owner, kept: r.lease_kept, attempts: r.attempts, started: r.started_at === now, expires: r.lease_expires_at! - now, indexed, count };
    });
    // One row: its type's count is owed, written with the next read of the counts (docs/design.md "Counts paid at the report").
    expect(got).toEqual({ written: 1, owed: 1, state: "running", owner: PUSH_WORKER, kept: 0, attempts: 1, started: true, expires: 30_000, indexed: 0, count: { pending: 0, running: 1 } });
  });

  it("an instance that dies before the call gives the job back unspent, and it runs", async () => {
    const { home, stub } = await knowing();
    const id = await runInDurableObject(stub, (o: ScopeDO) => {
      // The insert without its commit path's follow-up: as if the instance died between the two.
      const out = enqueueJobs(o.store, [newJob(home, { type: "demo.noop" })], Date.now(), { straight: true });
      if (!out.ok) throw new Error(out.message);
      return out.results[0]!.row!.id;
    });
    expect((await row(stub, id)).state).toBe("running");
    const cold = await restartCold(env.SCOPE, stub);
    await vi.waitFor(async () => expect((await row(cold, id)).state).toBe("completed"), { timeout: 10_000, interval: 20 });
    // Given back unspent (scope/push/orphans.ts), then run: one counted attempt.
    expect((await row(cold, id)).attempts).toBe(1);
  });

  it("goes in pending when it would overtake a pending job, is delayed, debounced, needs a permit, batches, or its key holds a live job", async () => {
    const { home, stub } = await knowing();
    const states = async (jobs: ReturnType<typeof newJob>[]) => {
      const out = await scopeRpc(stub).enqueue(jobs);
      if (!out.ok) throw new Error(out.message);
      return out.results.map((r) => r.job!.state);
    };
    // Delayed: pending; and then a due one of its type does not overtake it.
    expect(await states([newJob(home, { type: "demo.echo", delayMs: 3_600_000 })])).toEqual(["pending"]);
    expect(await states([newJob(home, { type: "demo.echo" })])).toEqual(["pending"]);
    // A type under a concurrency limit asks its pool for a permit first; a batch type gathers.
    expect(await states([newJob(home, { type: "demo.single" })])).toEqual(["pending"]);
    expect(await states([newJob(home, { type: "demo.digest" })])).toEqual(["pending"]);
    // A debounced key is due later; a key that holds a live job queues its follower behind it.
    expect(await states([newJob(home, { type: "demo.noop", dedupeKey: "d", keyMode: "debounce", debounceMs: 60_000 })])).toEqual(["pending"]);
    const [first] = await states([newJob(home, { type: "demo.sleep", payload: JSON.stringify({ ms: 1_000 }), dedupeKey: "k", keyMode: "pending" })]);
    expect(first).toBe("running");
    expect(await states([newJob(home, { type: "demo.sleep", payload: JSON.stringify({ ms: 0 }), dedupeKey: "k", keyMode: "pending" })])).toEqual(["pending"]);
  });

  it("an enqueue's types share the calls the dispatcher has room for", async () => {
    const { home, stub } = await knowing();
    const states = await runInDurableObject(stub, (o: ScopeDO) => {
      // Room for one call: the first type's jobs take it (up to its batch size), the others' go in pending.
      const store = { ...o.store, hooks: { ...o.store.hooks, startable: () => 1 } };
      const out = enqueueJobs(store, [newJob(home, { type: "demo.noop" }), newJob(home, { type: "demo.echo" }), newJob(home, { type: "demo.noop" }), newJob(home, { type: "demo.log" })], Date.now(), { straight: true });
      if (!out.ok) throw new Error(out.message);
      const states = out.results.map((r) => (r.row as JobRow).state);
      // Given back, as a restart would: this test starts no call for them.
      o.store.sql.exec("UPDATE job SET state = 'cancelled', finished_at = 1, lease_token = NULL, lease_expires_at = NULL, cancel_reason = 'test' WHERE state = 'running'");
      return states;
    });
    expect(states).toEqual(["running", "pending", "running", "pending"]);
  });

  it("a batch's jobs go straight in calls of the type's batch size, up to the dispatcher's room", async () => {
    const { home, stub } = await knowing();
    const out = await scopeRpc(stub).enqueue(Array.from({ length: 250 }, () => newJob(home, { type: "demo.noop" })));
    if (!out.ok) throw new Error(out.message);
    // batchSize 100 (the default): three calls carry all 250.
    expect(out.results.map((r) => r.job!.state).filter((s) => s === "running")).toHaveLength(250);
    await vi.waitFor(async () => expect((await rows(stub)).every((r) => r.state === "completed")).toBe(true), { timeout: 20_000, interval: 20 });
  });
});
