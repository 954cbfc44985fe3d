import { scopeRpc } from "../helpers/scope";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { JOB_FIND_EXPIRED_LEASES } from "../../src/scope/jobs/reap-pass";
import type { ScopeDO } from "../../src/scope/scope-do";
import { alarmAt, freshScope, newJob, row, rows, T0, useClock, put, partsOf } from "../helpers/scope";

async function claimed(over = {}, leaseMs = 30_000) {
  const ctx = await freshScope();
  await put(ctx.stub, [newJob(ctx.home, over)]);
  const [job] = await scopeRpc(ctx.stub).claim({ worker: "w", types: null, limit: 1, leaseMs });
  return { ...ctx, job: job! };
}

describe("reap pass, fired by the alarm", () => {
  it("arms the alarm at the lease expiry", async () => {
    const { stub } = await claimed();
    expect(await alarmAt(stub)).toBe(T0 + 30_000);
  });

  it("an expired lease goes back to pending with a backoff, and the attempt counts", async () => {
    const { stub, job, clock } = await claimed({ maxAttempts: 3 });
    await useClock(stub, clock!, () => 0.5);
    clock!.advance(30_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const r = await row(stub, job.id);
    expect(r).toMatchObject({ state: "pending", attempts: 1, lease_token: null });
    expect(r.last_error).toMatch(/lease expired/);
    expect(r.run_at).toBe(T0 + 30_000 + 500);
    // the old holder is fenced out
    expect(await scopeRpc(stub).complete(job.id, job.leaseToken!, null)).toMatchObject({ ok: false, code: "lease_lost", reason: "expired" });
    // and the alarm now waits for the retry to come due
    expect(await alarmAt(stub)).toBe(r.run_at);
  });

  it("an expired lease on the last attempt fails the job as stalled", async () => {
    const { stub, job, clock } = await claimed({ maxAttempts: 1 });
    clock!.advance(31_000);
    await runDurableObjectAlarm(stub);
    expect(await row(stub, job.id)).toMatchObject({ state: "failed", failure_kind: "stalled", attempts: 1 });
  });

  it("a lease that ran out at timeoutMs is a timeout: retried, then failed as timeout", async () => {
    const { stub, job, clock } = await claimed({ maxAttempts: 2, timeoutMs: 5_000 });
    clock!.advance(5_000);
    await runDurableObjectAlarm(stub);
    const r = await row(stub, job.id);
    expect(r).toMatchObject({ state: "pending", attempts: 1 });
    expect(r.last_error).toMatch(/timed out after 5000 ms/);
    clock!.set(r.run_at);
    await scopeRpc(stub).claim({ worker: "w", types: null, limit: 1, leaseMs: 30_000 });
    clock!.advance(5_000);
    await runDurableObjectAlarm(stub);
    expect(await row(stub, job.id)).toMatchObject({ state: "failed", failure_kind: "timeout", attempts: 2 });
  });

  it("a duplicate or early alarm changes nothing", async () => {
    const { stub, job } = await claimed();
    const before = await row(stub, job.id);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await row(stub, job.id)).toEqual(before);
    expect(await alarmAt(stub)).toBe(T0 + 30_000);
  });

  it("the alarm never throws: a failing pass is recorded and retried later", async () => {
    const { stub, clock } = await claimed();
    clock!.advance(30_000);
    await runInDurableObject(stub, (o: ScopeDO) => {
      o.random = () => {
        throw new Error("injected failure");
      };
    });
    await expect(runDurableObjectAlarm(stub)).resolves.toBe(true);
    expect(await alarmAt(stub, { flush: false })).toBe(T0 + 30_000 + 5_000);
  });

  it("with the catalog down, the alarm still comes back for the next lease expiry, not later", async () => {
    const ctx = await freshScope();
    await runInDurableObject(ctx.stub, (o: ScopeDO) => {
      Object.assign(partsOf(o), { sendSummary: async () => Promise.reject(new Error("catalog down")) });
    });
    await put(ctx.stub, [newJob(ctx.home), newJob(ctx.home)]);
    await scopeRpc(ctx.stub).claim({ worker: "w", types: null, limit: 1, leaseMs: 1_000 });
    await scopeRpc(ctx.stub).claim({ worker: "w", types: null, limit: 1, leaseMs: 60_000 });
    ctx.clock!.advance(1_000);
    await runDurableObjectAlarm(ctx.stub);
    // The reaped job comes due again within 1 s (backoff base); the unsent summary is due at its 10 s grace
    // deadline (failed tries wait 5 s); the second lease expires at +60 s. The alarm is the earliest, never "now".
    const retried = (await rows(ctx.stub)).find((r) => r.state === "pending")!;
    expect(retried.run_at).toBeGreaterThan(T0 + 1_000);
    expect(await alarmAt(ctx.stub, { flush: false })).toBe(retried.run_at);
    ctx.clock!.set(retried.run_at);
    await runDurableObjectAlarm(ctx.stub);
    expect(await alarmAt(ctx.stub, { flush: false })).toBe(T0 + 10_000);
  });

  it("finds expired leases through job_lease_idx", async () => {
    const { stub } = await claimed();
    const plan = await runInDurableObject(stub, (_o: ScopeDO, state) =>
      state.storage.sql.exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${JOB_FIND_EXPIRED_LEASES}`, T0, 10).toArray().map((r) => r.detail),
    );
    expect(plan.join("\n")).toMatch(/job_lease_idx/);
    expect(plan.join("\n")).not.toMatch(/TEMP B-TREE/);
  });
});
