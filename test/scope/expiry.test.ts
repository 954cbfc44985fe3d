/**
 * Expiry before start (src/scope/jobs/expiry.ts; docs/guards.md "Expiry before start"): a job not started by its expiry
 * ends `expired` and never runs — a claim never leases it past its expiry, the alarm ends it — while a job that
 * started once never expires; counted, evented, retryable by hand (which drops the expiry); the type's default
 * counts from the run time; refusals name the field.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { alarmAt, env, freshScope, newJob, restartCold, row, T0, useClock, type ScopeStub } from "../helpers/scope";
import { api, uniqueScope } from "../helpers/api";

async function claim(stub: ScopeStub, type = "test.job", limit = 10) {
  return runInDurableObject(stub, (o: ScopeDO) => o.claim({ worker: "w", types: [type], limit, leaseMs: 30_000 }));
}

async function counts(stub: ScopeStub, type = "test.job") {
  return (await stub.summary()).types.find((t) => t.type === type);
}

describe("a job with an expiry", () => {
  it("is not leased once its expiry passed, is ended expired by the alarm, and runs when retried by hand", async () => {
    const { home, stub, clock } = await freshScope();
    const a = newJob(home, { expiresAt: T0 + 1000 });
    const b = newJob(home);
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([a, b]));
    expect(await stub.get(a.id)).toMatchObject({ state: "pending", expiresAt: T0 + 1000 });
    expect(await stub.get(b.id)).toMatchObject({ expiresAt: null });
    // The alarm is set for its expiry.
    expect(await alarmAt(stub)).toBe(T0 + 1000);

    clock!.advance(1000);
    // Past its expiry and not yet ended by the alarm: a claim takes the other job only.
    expect((await claim(stub)).map((j) => j.id)).toEqual([b.id]);
    expect(await row(stub, a.id)).toMatchObject({ state: "pending", started_at: null });

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await row(stub, a.id)).toMatchObject({ state: "expired", finished_at: T0 + 1000, cancel_reason: "not started before it expired", attempts: 0, started_at: null });
    expect(await counts(stub)).toMatchObject({ expired: 1, pending: 0, running: 1 });
    const timeline = await runInDurableObject(stub, (o: ScopeDO) => o.timeline(a.id, 10));
    expect(timeline!.steps.map((s) => [s.state, s.note])).toEqual([
      ["pending", null],
      ["expired", "not started before it expired"],
    ]);

    // A manual retry runs it: due now, its expiry dropped.
    expect(await stub.retry(a.id)).toMatchObject({ ok: true, job: { state: "pending", expiresAt: null } });
    expect(await counts(stub)).toMatchObject({ expired: 0, pending: 1 });
    expect((await claim(stub)).map((j) => j.id)).toEqual([a.id]);
  });

  it("survives a restart of its object: the new instance arms the alarm for it and ends it", async () => {
    const { home, stub, clock } = await freshScope();
    const a = newJob(home, { expiresAt: T0 + 1000 });
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([a, newJob(home)]));
    const cold = await restartCold(env.SCOPE, stub);
    await useClock(cold, clock!);
    expect(await alarmAt(cold)).toBe(T0 + 1000);
    clock!.advance(1000);
    expect((await claim(cold)).map((j) => j.id)).not.toContain(a.id);
    await runDurableObjectAlarm(cold);
    expect(await row(cold, a.id)).toMatchObject({ state: "expired" });
  });

  it("never expires once it has started: back to pending after a failed attempt, it runs after its expiry", async () => {
    const { home, stub, clock } = await freshScope();
    const a = newJob(home, { expiresAt: T0 + 1000 });
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([a]));
    const [held] = await claim(stub);
    expect(await stub.fail(a.id, held!.leaseToken, { error: "boom", retryAfterMs: 5000 })).toMatchObject({ ok: true, outcome: "retry_scheduled" });
    // The object may wake at the expiry it kept in memory (an early bound: expiry.ts), but nothing expires then, and
    // its next wake-up is the retry.
    clock!.advance(1000);
    await runDurableObjectAlarm(stub);
    expect(await row(stub, a.id)).toMatchObject({ state: "pending" });
    expect(await alarmAt(stub)).toBe(T0 + 5000);
    clock!.advance(4000);
    await runDurableObjectAlarm(stub);
    expect(await row(stub, a.id)).toMatchObject({ state: "pending" });
    expect((await claim(stub)).map((j) => j.id)).toEqual([a.id]);
  });

  it("frees its dedupe key: an enqueue of the key after the expiry creates a new job", async () => {
    const { home, stub, clock } = await freshScope();
    const a = newJob(home, { dedupeKey: "k", expiresAt: T0 + 1000 });
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([a]));
    // Before: the key's pending job answers.
    const same = await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([newJob(home, { dedupeKey: "k" })]));
    expect(same.ok && same.results[0]).toMatchObject({ id: a.id, created: false });
    clock!.advance(1000);
    await runDurableObjectAlarm(stub);
    const next = await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([newJob(home, { dedupeKey: "k" })]));
    expect(next.ok && next.results[0]).toMatchObject({ created: true });
  });

  it("moves with its run time when a debounce re-times the job", async () => {
    const { home, stub, clock } = await freshScope();
    const debounced = (n: number) => newJob(home, { type: "pull.expiring", payload: JSON.stringify({ n }), dedupeKey: "d", keyMode: "debounce", debounceMs: 500 });
    const a = debounced(1);
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([a]));
    expect(await row(stub, a.id)).toMatchObject({ run_at: T0 + 500, expires_at: T0 + 1500 });
    clock!.advance(400);
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([debounced(2)]));
    expect(await row(stub, a.id)).toMatchObject({ run_at: T0 + 900, expires_at: T0 + 1900 });
  });

  it("of its type's expireAfterMs counts from its run time: a delayed job gets the whole window once due", async () => {
    const { home, stub, clock } = await freshScope();
    const a = newJob(home, { type: "pull.expiring", delayMs: 5000 });
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([a]));
    expect(await row(stub, a.id)).toMatchObject({ run_at: T0 + 5000, expires_at: T0 + 6000 });
    clock!.advance(5999);
    await runDurableObjectAlarm(stub);
    expect((await claim(stub, "pull.expiring")).map((j) => j.id)).toEqual([a.id]);
  });

  it("of a pushed type is never dispatched after its expiry: the alarm ends it before it fills", async () => {
    const { home, stub, clock } = await freshScope();
    // Due at T0 + 10 s, so expiring at T0 + 11 s (its type's expireAfterMs); the object wakes only after both.
    const a = newJob(home, { type: "test.expiring", runAt: T0 + 10_000 });
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([a]));
    clock!.advance(11_000);
    await runDurableObjectAlarm(stub);
    expect(await row(stub, a.id)).toMatchObject({ state: "expired", attempts: 0, started_at: null });
    expect(await counts(stub, "test.expiring")).toMatchObject({ expired: 1, pending: 0, running: 0 });
  });
});

describe("expiry over HTTP", () => {
  it("is shown on the job, counted in stats and listed; refused naming the field when it could never run", async () => {
    const scope = uniqueScope("exp");
    const made = await api("POST", "/v1/jobs", { type: "pull.expiring", payload: {}, scope, expiresInMs: 60_000 });
    expect(made.status).toBe(201);
    expect(made.body.job.expiresAt).toBeGreaterThan(Date.now() + 50_000);
    const own = await api("POST", "/v1/jobs", { type: "pull.expiring", payload: {}, scope });
    // Its type's window, from its run time.
    expect(own.body.job.expiresAt).toBe(own.body.job.runAt + 1000);

    const refused = [
      [{ expiresAt: Date.now() - 1 }, "expiresAt"],
      [{ expiresAt: Date.now() + 1000, runAt: Date.now() + 2000 }, "expiresAt"],
      [{ expiresInMs: 1000, delayMs: 1000 }, "expiresInMs"],
      [{ expiresInMs: 1000, expiresAt: Date.now() + 5000 }, "expiresInMs"],
      [{ expiresInMs: 0 }, "expiresInMs"],
    ] as const;
    for (const [options, field] of refused) {
      const res = await api("POST", "/v1/jobs", { type: "pull.expiring", payload: {}, scope, ...options });
      expect(res.status, JSON.stringify(options)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(options)).toContain(field);
    }
    const batch = await api("POST", "/v1/jobs/batch", { jobs: [{ type: "pull.expiring", payload: {} }, { type: "pull.expiring", payload: {}, expiresInMs: 10, delayMs: 100 }] });
    expect(batch.status).toBe(400);
    expect(batch.body.error.details.map((d: { path: string }) => d.path)).toContain("jobs[1].expiresInMs");
    // Nothing was written by the refusals: the scope holds the two jobs made above.
    const listed = await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}`);
    expect(listed.body.items).toHaveLength(2);
  });
});
