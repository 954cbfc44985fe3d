import { scopeRpc } from "../helpers/scope";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { parseConfig } from "../../src/config/load";
import { alarmAt, freshScope, newJob, row, rows, T0, useClock, put, partsOf } from "../helpers/scope";

const DAY = 86_400_000;
const lease = { worker: "w", types: null, limit: 10, leaseMs: 30_000 };

describe("scope object lifecycle", () => {
  it("an evicted object resumes from SQLite alone: leases, tokens and the alarm survive", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home), newJob(home, { delayMs: 60_000 })]);
    const [job] = await scopeRpc(stub).claim(lease);
    const alarm = await alarmAt(stub);
    expect(alarm).toBe(T0 + 30_000);

    await evictDurableObject(stub);
    await useClock(stub, clock!);
    expect(await alarmAt(stub)).toBe(alarm);
    expect(await scopeRpc(stub).heartbeat(job!.id, job!.leaseToken!, null)).toMatchObject({ ok: true });
    expect(await scopeRpc(stub).complete(job!.id, job!.leaseToken!, null)).toMatchObject({ ok: true, job: { state: "completed" } });

    await evictDurableObject(stub);
    await useClock(stub, clock!.advance(60_000));
    expect((await scopeRpc(stub).claim(lease)).map((r) => r.state)).toEqual(["running"]);
  });

  it("a summary that could not go out is sent by the alarm, even after an eviction", async () => {
    const { home, stub, clock } = await freshScope();
    await runInDurableObject(stub, (o: ScopeDO) => {
      // The catalog is unreachable for this instance.
      Object.assign(partsOf(o), { sendSummary: async () => Promise.reject(new Error("catalog down")) });
    });
    await put(stub, [newJob(home, { delayMs: 3_600_000 })]);
    const mark = () =>
      runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec("SELECT count(*) AS n FROM meta WHERE key = 'catalog_dirty_since'").one().n);
    expect(await mark()).toBe(1);
    // The persisted mark holds the alarm at its grace deadline, ahead of the job's own time.
    expect(await alarmAt(stub, { flush: false })).toBe(T0 + 10_000);

    await evictDurableObject(stub); // a fresh instance, with a working catalog
    await useClock(stub, clock!.advance(10_000));
    await runDurableObjectAlarm(stub);
    expect(await mark()).toBe(0);
    expect(await alarmAt(stub, { flush: false })).toBe(T0 + 3_600_000);
  });

  it("the retention sweep deletes terminal jobs once their retention has passed", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home), newJob(home), newJob(home)]);
    const [a, b, c] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(a!.id, a!.leaseToken!, null);
    await scopeRpc(stub).fail(b!.id, b!.leaseToken!, { error: "x", fatal: true });
    await scopeRpc(stub).cancel(c!.id, null);
    expect(await alarmAt(stub)).toBe(T0 + DAY); // completed and cancelled keep 1 day, failed 7
    clock!.advance(DAY);
    await runDurableObjectAlarm(stub);
    expect((await rows(stub)).map((r) => r.state)).toEqual(["failed"]);
    expect(await alarmAt(stub)).toBe(T0 + 7 * DAY);
    clock!.advance(6 * DAY);
    await runDurableObjectAlarm(stub);
    expect(await rows(stub)).toEqual([]);
    // What is left are the deleted ids' tombstones (retention.idempotencyMs, 7 days): the first lapse at T0 + 8 days.
    expect(await alarmAt(stub)).toBe(T0 + 8 * DAY);
  });

  it("a retention of null keeps that state's jobs until pruned: no sweep, no alarm for them", async () => {
    const { home, stub, clock } = await freshScope();
    await runInDurableObject(stub, (o: ScopeDO) => {
      (o.store as { config: unknown }).config = parseConfig({ retention: { failedMs: null } });
    });
    await put(stub, [newJob(home), newJob(home)]);
    const [a, b] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(a!.id, a!.leaseToken!, null);
    await scopeRpc(stub).fail(b!.id, b!.leaseToken!, { error: "x", fatal: true });
    expect(await alarmAt(stub)).toBe(T0 + DAY); // the completed one only
    clock!.advance(DAY);
    await runDurableObjectAlarm(stub);
    expect((await rows(stub)).map((r) => r.state)).toEqual(["failed"]);
    expect(await alarmAt(stub)).toBe(T0 + 8 * DAY); // the completed job's tombstone only; the failed one is never swept
    clock!.advance(400 * DAY);
    expect(await stub.prune(clock!.now(), ["failed"])).toBe(1);
  });

  it("a deleted job's id stays taken for retention.idempotencyMs: answered, not created; then free again", async () => {
    const { home, stub, clock } = await freshScope();
    const job = newJob(home, { id: "once" });
    await put(stub, [job]);
    const [leased] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(leased!.id, leased!.leaseToken!, null);
    clock!.advance(DAY);
    await runDurableObjectAlarm(stub);
    expect(await rows(stub)).toEqual([]);
    const again = await scopeRpc(stub).enqueue([job]);
    expect(again).toEqual({ ok: true, results: [{ id: null, job: null, created: false }] });
    expect(await rows(stub)).toEqual([]);
    // The alarm comes back to drop the tombstone, seven days after the delete.
    expect(await alarmAt(stub)).toBe(T0 + 8 * DAY);
    clock!.advance(7 * DAY);
    await runDurableObjectAlarm(stub);
    expect(await alarmAt(stub)).toBeNull();
    expect((await put(stub, [job]))[0]!.created).toBe(true);
  });

  it("prune deletes terminal jobs of the chosen states finished before olderThan", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home), newJob(home), newJob(home)]);
    const [a, b] = await scopeRpc(stub).claim({ ...lease, limit: 2 });
    await scopeRpc(stub).complete(a!.id, a!.leaseToken!, null);
    clock!.advance(1000);
    await scopeRpc(stub).complete(b!.id, b!.leaseToken!, null);
    expect(await stub.prune(T0 + 500, ["completed"])).toBe(1);
    expect(await stub.prune(T0 + 5000, ["failed", "cancelled"])).toBe(0);
    expect((await rows(stub)).map((r) => r.state)).toEqual(["completed", "pending"]);
  });

  it("cancelAll cancels pending jobs, and running ones unless pendingOnly", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home), newJob(home), newJob(home), newJob(home)]);
    const [running] = await scopeRpc(stub).claim({ ...lease, limit: 1 });
    expect(await stub.cancelAll(true, "tenant deleted")).toBe(3);
    expect((await row(stub, running!.id)).state).toBe("running");
    expect(await stub.cancelAll(false, null)).toBe(1);
    expect(await scopeRpc(stub).complete(running!.id, running!.leaseToken!, null)).toMatchObject({ ok: false, code: "lease_lost", reason: "cancelled" });
  });

  it("retry sends a failed job back to pending, due now, attempts 0, error cleared", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home, { maxAttempts: 1 })]);
    const [job] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).fail(job!.id, job!.leaseToken!, { error: "boom" });
    clock!.advance(5000);
    expect(await scopeRpc(stub).retry(job!.id)).toMatchObject({
      ok: true,
      job: { state: "pending", attempts: 0, lastError: null, failureKind: null, finishedAt: null, runAt: T0 + 5000 },
    });
    expect(await scopeRpc(stub).retry(job!.id)).toMatchObject({ ok: false, code: "conflict", state: "pending" });
  });

  it("retry refuses while another live job holds the dedupe key", async () => {
    const { home, stub } = await freshScope();
    const [first] = await put(stub, [newJob(home, { dedupeKey: "k" })]);
    await scopeRpc(stub).cancel(first!.row.id, null);
    await put(stub, [newJob(home, { dedupeKey: "k" })]);
    expect(await scopeRpc(stub).retry(first!.row.id)).toMatchObject({ ok: false, code: "conflict" });
  });

  it("summaries count by type and state, split pending into due and scheduled", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [
      newJob(home, { type: "a" }),
      newJob(home, { type: "a", delayMs: 1000 }),
      newJob(home, { type: "a", runAt: T0 - 50 }),
      newJob(home, { type: "b", maxAttempts: 1 }),
    ]);
    const [b] = await scopeRpc(stub).claim({ ...lease, types: ["b"] });
    await scopeRpc(stub).fail(b!.id, b!.leaseToken!, { error: "x" });
    const s = await stub.summary();
    expect(s.home).toBe(home);
    const a = s.types.find((t) => t.type === "a")!;
    expect(a).toMatchObject({ pending: 2, scheduled: 1, running: 0, nextRunAt: T0 - 50 });
    expect(s.types.find((t) => t.type === "b")).toMatchObject({ pending: 0, failed: { retries_exhausted: 1 }, nextRunAt: null });
  });

  it("hot statements use their indexes", async () => {
    const { stub } = await freshScope();
    const plans = await runInDurableObject(stub, (_o: ScopeDO, state) => {
      const plan = (q: string, ...args: unknown[]) =>
        state.storage.sql.exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${q}`, ...(args as never[])).toArray().map((r) => r.detail).join(" | ");
      return {
        dedupe: plan("SELECT * FROM job WHERE dedupe_key = ? AND dedupe_key IS NOT NULL AND state IN ('pending', 'running')", "k"),
        nextRun: plan("SELECT min(run_at) AS t FROM job WHERE state = 'pending' AND held = 0 AND type = ? AND priority = ? AND run_at > ?", "a", 0, T0),
        lease: plan("SELECT min(lease_expires_at) AS t FROM job WHERE state = 'running' AND lease_kept = 1"),
        finished: plan("SELECT min(finished_at) AS t FROM job WHERE state = ? AND state <> 'completed' AND finished_at IS NOT NULL", "failed"),
      };
    });
    expect(plans.dedupe).toMatch(/job_key_idx/);
    // Due times are asked per priority level on the claim index (scope/jobs/levels.ts; test/scope/levels.test.ts).
    expect(plans.nextRun).toMatch(/job_claim_idx \(type=\? AND priority=\? AND run_at>\?\)/);
    expect(plans.lease).toMatch(/job_lease_idx/);
    expect(plans.finished).toMatch(/job_finished_idx/);
  });
});
