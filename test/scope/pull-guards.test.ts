/**
 * Guards on pulled types (scope/pull/pull-permits.ts, docs/pull-workers.md "Pull workers"): a
 * claim takes the permits a pushed call would, a heartbeat renews them, and
 * complete, fail, release, the reap pass and (once the lease would have
 * ended) cancel give them back — against the real pool objects. Each test
 * has its own types (vitest.config.mts), so pools start empty.
 */
import { scopeRpc } from "../helpers/scope";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ClaimRequest } from "../../src/scope/jobs/claim";
import type { ScopeDO } from "../../src/scope/scope-do";
import { WaitNotifier } from "../../src/scope/pull/wait-notify";
import { guardName, resourcePoolName, typePoolName } from "../../src/pool/pool-name";
import { api, waitForJob, isTerminal } from "../helpers/api";
import { env, freshScope, newJob, put, row, type ScopeStub, partsOf } from "../helpers/scope";

const claim = (stub: ScopeStub, types: string[], over: Partial<ClaimRequest> = {}) =>
  scopeRpc(stub).claim({ worker: "w", types, limit: 10, leaseMs: 30_000, ...over });

const limits = { concurrency: null, ratePerMinute: null };
const pool = (name: string) => env.POOL.getByName(name);
const permitsIn = async (name: string) => (await pool(name).status(limits)).permits;
const expiriesIn = (name: string) =>
  runInDurableObject(pool(name), (_o: unknown, state) => state.storage.sql.exec<{ expires_at: number }>("SELECT expires_at FROM permit").toArray().map((r) => r.expires_at));

/** recordNotices: the types this object tells parked claims about from now on. */
async function recordNotices(stub: ScopeStub): Promise<string[]> {
  const told: string[] = [];
  await runInDurableObject(stub, (o: ScopeDO) => {
    partsOf(o).pull.waits = new WaitNotifier(async (type) => told.push(type), () => undefined);
  });
  return told;
}

describe("guards on pulled types", () => {
  it("concurrency: a claim leases no more than the free permits; complete frees the slot, kept for the object that waited, which is poked", async () => {
    const type = "pull.limited";
    const a = await freshScope();
    const b = await freshScope();
    const c = await freshScope();
    for (const s of [a, b, c]) await put(s.stub, [newJob(s.home, { type })]);
    const [first] = await claim(a.stub, [type]);
    expect(first).toBeDefined();
    expect(await permitsIn(typePoolName(type))).toBe(1);
    expect(await claim(b.stub, [type])).toEqual([]); // b joins the pool's line
    const told = await recordNotices(b.stub);
    expect((await scopeRpc(a.stub).complete(first!.id, first!.leaseToken!, null)).ok).toBe(true);
    // The slot went back before complete answered; the pool keeps it for b and pokes it, which wakes b's parked claims.
    await expect.poll(() => told).toEqual([type]);
    expect(await claim(c.stub, [type])).toEqual([]);
    const [second] = await claim(b.stub, [type]);
    expect(second).toBeDefined();
    await scopeRpc(b.stub).fail(second!.id, second!.leaseToken!, { error: "x", fatal: true });
    expect(await permitsIn(typePoolName(type))).toBe(0);
  });

  it("heartbeats renew the permits with the lease", async () => {
    const type = "pull.renewed";
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type })]);
    const [job] = await claim(stub, [type], { leaseMs: 10_000 });
    const [before] = await expiriesIn(typePoolName(type));
    expect((await scopeRpc(stub).heartbeat(job!.id, job!.leaseToken!, 60_000)).ok).toBe(true);
    const [after] = await expiriesIn(typePoolName(type));
    // The permit now lives PERMIT_TTL_FACTOR (2) × the new lease: about 120 s instead of 20 s.
    expect(after! - before!).toBeGreaterThan(90_000);
    await scopeRpc(stub).complete(job!.id, job!.leaseToken!, null);
    expect(await permitsIn(typePoolName(type))).toBe(0);
  });

  it("the reap pass gives back the permit of an attempt whose lease ran out", async () => {
    const type = "pull.reaped";
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home, { type, maxAttempts: 1 })]);
    const [job] = await claim(stub, [type], { leaseMs: 20_000 });
    expect(await permitsIn(typePoolName(type))).toBe(1);
    clock!.advance(21_000);
    await runDurableObjectAlarm(stub);
    expect((await row(stub, job!.id)).state).toBe("failed");
    expect(await permitsIn(typePoolName(type))).toBe(0);
  });

  it("cancel keeps the permit until the cancelled attempt's lease would have ended (its worker stops at its next heartbeat)", async () => {
    const type = "pull.cancelled";
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home, { type })]);
    const [job] = await claim(stub, [type], { leaseMs: 20_000 });
    expect((await scopeRpc(stub).cancel(job!.id, "operator")).ok).toBe(true);
    expect(await permitsIn(typePoolName(type))).toBe(1);
    expect((await scopeRpc(stub).heartbeat(job!.id, job!.leaseToken!, null)).ok).toBe(false);
    clock!.advance(20_001);
    await runDurableObjectAlarm(stub);
    expect(await permitsIn(typePoolName(type))).toBe(0);
  });

  it("pools: the rate spend of a released job is refunded (its attempt did not count)", async () => {
    const type = "pull.rated"; // pool pull-rate: 2 starts a minute
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type }), newJob(home, { type }), newJob(home, { type })]);
    const got = await claim(stub, [type]);
    expect(got).toHaveLength(2);
    expect(await claim(stub, [type])).toEqual([]);
    expect((await scopeRpc(stub).release(got[0]!.id, got[0]!.leaseToken!)).ok).toBe(true);
    const again = await claim(stub, [type]);
    expect(again).toHaveLength(1);
    for (const j of [got[1]!, again[0]!]) await scopeRpc(stub).complete(j.id, j.leaseToken!, null);
    expect((await pool(resourcePoolName("pull-rate")).status({ concurrency: null, ratePerMinute: 2 })).window.spent).toBe(2);
  });

  it("notWhileRunning between two pulled types: one waits while the other runs", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type: "pull.left" }), newJob(home, { type: "pull.right" })]);
    const [left] = await claim(stub, ["pull.left"]);
    expect(left).toBeDefined();
    expect(await claim(stub, ["pull.right"])).toEqual([]);
    await scopeRpc(stub).complete(left!.id, left!.leaseToken!, null);
    const [right] = await claim(stub, ["pull.right"]);
    expect(right).toBeDefined();
    await scopeRpc(stub).complete(right!.id, right!.leaseToken!, null);
    expect(await permitsIn(guardName("pull.left", "pull.right"))).toBe(0);
  });

  it("notWhileRunning between a pulled and a pushed type: the pushed job starts only once the pulled one ends", async () => {
    const { home, stub } = await freshScope(null); // the real clock, as the pushed job's object has
    await put(stub, [newJob(home, { type: "pull.vs.push" })]);
    const [pulled] = await claim(stub, ["pull.vs.push"]);
    const pushed = (await api("POST", "/v1/jobs", { type: "test.push.guarded", payload: { ms: 0 } })).body.job;
    expect((await api("GET", `/v1/jobs/${pushed.id}`)).body.job.state).toBe("pending");
    await scopeRpc(stub).complete(pulled!.id, pulled!.leaseToken!, null);
    // The guard's pool pokes the pushed job's object when the slot frees.
    const done = await waitForJob(pushed.id, isTerminal);
    expect(done.state).toBe("completed");
    expect(done.startedAt).toBeGreaterThanOrEqual((await row(stub, pulled!.id)).finished_at! - 1);
  });

  it("waitsFor: a pulled type is not handed out while the type it waits for has due or running work", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type: "pull.after" }), newJob(home, { type: "pull.before" })]);
    expect(await claim(stub, ["pull.after"])).toEqual([]);
    const [before] = await claim(stub, ["pull.before"]);
    expect(await claim(stub, ["pull.after"])).toEqual([]); // running counts too
    await scopeRpc(stub).complete(before!.id, before!.leaseToken!, null);
    await stub.flushCatalog(); // the catalog's view (about a second behind) is asked once this object is clear
    const [after] = await claim(stub, ["pull.after"]);
    expect(after?.type).toBe("pull.after");
  });
});
