/**
 * Pausing a type queue-wide (docs/http-api.md "Pausing a type"): POST /v1/types/{type}/pause
 * and /resume, GET /v1/types. A paused type takes enqueues; nothing of it is
 * dispatched or claimed, in objects that existed at the pause and in ones made
 * after it; resuming starts what waited.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { homeOfJobId } from "../../src/job/home";
import { PauseGate, PROMISE_MARGIN_MS } from "../../src/scope/jobs/pause-gate";
import { api, uniqueScope, uniqueType, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";
import { env, freshScope } from "../helpers/scope";

const stubOf = (id: string) => env.SCOPE.getByName(homeOfJobId(id)!.name);

/** settled: the object knows the pause state (a new one asks its catalog shard first), and nothing it started is in flight. */
async function settled(id: string, type: string, paused: boolean) {
  const stub = stubOf(id);
  await vi.waitFor(async () => expect((await stub.paused()).includes(type)).toBe(paused), { timeout: 5_000, interval: 10 });
  await runDurableObjectAlarm(stub);
  await stub.drain();
}

describe("pause and resume a type", () => {
  it("a paused pushed type takes enqueues and starts none, in an object that knew the type and in a new one; resume runs them", async () => {
    const type = "test.pausable";
    const key = crypto.randomUUID();
    const old = uniqueScope("pause");
    const before = (await api("POST", "/v1/jobs", { type, payload: { ms: 0, key }, scope: old })).body.job.id;
    await waitForJob(before, (j) => j.state === "completed");

    const paused = await api("POST", `/v1/types/${type}/pause`);
    expect(paused).toMatchObject({ status: 200, body: { type, paused: true, unreached: 0 } });
    // Told at once: the object that reported before the pause holds it when the call answers.
    expect(await stubOf(before).paused()).toContain(type);

    const inOld = (await api("POST", "/v1/jobs", { type, payload: { ms: 0, key }, scope: old })).body.job.id;
    const inNew = (await api("POST", "/v1/jobs", { type, payload: { ms: 0, key }, scope: uniqueScope("pause") })).body.job.id;
    for (const id of [inOld, inNew]) await settled(id, type, true);
    expect((await api("GET", `/v1/jobs/${inOld}`)).body.job.state).toBe("pending");
    expect((await api("GET", `/v1/jobs/${inNew}`)).body.job.state).toBe("pending");
    expect((await probe.spans(key)).map((s) => s.id)).toEqual([before]);

    const listed = (await api("GET", "/v1/types")).body.items.find((t: { type: string }) => t.type === type);
    expect(listed).toMatchObject({ type, paused: true, pushed: true, declared: true, pausedChangedAt: expect.any(Number) });

    expect(await api("POST", `/v1/types/${type}/resume`)).toMatchObject({ status: 200, body: { type, paused: false } });
    await waitForJob(inOld, (j) => j.state === "completed");
    await waitForJob(inNew, (j) => j.state === "completed");
    expect((await api("GET", "/v1/types")).body.items.find((t: { type: string }) => t.type === type).paused).toBe(false);
  });

  it("a paused pulled type is not claimed, by a claim naming it, an untyped claim or an inline claim; a job already leased still completes", async () => {
    const type = uniqueType("pause");
    const running = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job.id;
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 1 })).body.jobs;
    expect(leased.id).toBe(running);
    const waiting = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job.id;

    await api("POST", `/v1/types/${type}/pause`);
    expect((await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 })).body.jobs).toEqual([]);
    const untyped = (await api("POST", "/v1/claim", { worker: "w", limit: 50 })).body.jobs as { id: string; type: string; leaseToken: string }[];
    expect(untyped.filter((j) => j.type === type)).toEqual([]);
    for (const j of untyped) await api("POST", `/v1/jobs/${j.id}/release`, { leaseToken: j.leaseToken });
    const inline = await api("POST", "/v1/jobs/claim-or-enqueue", { job: { type, payload: {}, dedupeKey: "k" }, worker: "w" });
    expect(inline.status).toBe(200);
    expect(inline.body.leaseToken ?? null).toBeNull();

    expect((await api("POST", `/v1/jobs/${running}/complete`, { leaseToken: leased.leaseToken })).status).toBe(200);
    expect((await api("GET", `/v1/jobs/${waiting}`)).body.job.state).toBe("pending");

    await api("POST", `/v1/types/${type}/resume`);
    const after = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 })).body.jobs.map((j: { id: string }) => j.id);
    expect(after).toContain(waiting);
  });

  it("refuses a type name that is not one, naming the field, and pauses nothing", async () => {
    const r = await api("POST", `/v1/types/${"x".repeat(200)}/pause`);
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("type");
  });

  it("a notice that overtakes a newer answer changes nothing; the promise only lengthens; a new instance reads both back; another shard's answer counts", async () => {
    const type = uniqueType("gate");
    const { stub } = await freshScope(null);
    await runInDurableObject(stub, async (_o, state) => {
      let synced = 0;
      const gateOver = () =>
        new PauseGate({
          sql: state.storage.sql,
          atomic: (fn) => state.storage.transactionSync(fn),
          now: () => 1_000,
          ask: async () => ({ version: 0, types: [], promiseMs: 0, from: "catalog/1" }),
          synced: () => synced++,
          keepAlive: () => undefined,
        });
      const gate = gateOver();
      expect(gate.fresh(1_000)).toBe(false);
      gate.apply({ version: 2, types: [type], promiseMs: 10_000_000 - 500, from: "catalog/1" }, 500);
      expect([gate.paused(), gate.fresh(1_000), synced]).toEqual([[type], true, 1]);
      gate.apply({ version: 1, types: [], promiseMs: 4_000, from: "catalog/1" }, 1_000);
      expect(gate.paused()).toEqual([type]);
      expect([gate.fresh(10_000_000 - PROMISE_MARGIN_MS - 1), gate.fresh(10_000_000 - PROMISE_MARGIN_MS)]).toEqual([true, false]);
      const again = gateOver();
      expect([again.paused(), again.fresh(1_000)]).toEqual([[type], true]);
      expect(synced).toBe(1);
      // Another shard answers (the shard count changed): its own, lower, version counts.
      again.apply({ version: 1, types: [], promiseMs: 0, from: "catalog:2/4" }, 1_000);
      expect(again.paused()).toEqual([]);
    });
  });
});

describe("an operator's misspelled type", () => {
  it("pause, resume and retry of a type neither declared nor seen answer 404 with the nearest names, and change nothing", async () => {
    for (const [path, body] of [
      ["/v1/types/test.pausabel/pause", undefined],
      ["/v1/types/test.pausabel/resume", undefined],
      ["/v1/retry", { type: "test.pausabel" }],
    ] as const) {
      const r = await api("POST", path, body);
      expect(r.status, path).toBe(404);
      expect(r.body.error).toMatchObject({ code: "not_found", details: { path: "type", type: "test.pausabel", suggestions: ["test.pausable"] } });
      expect(r.body.error.message).toBe('type: job type "test.pausabel" is neither declared in the config nor seen by the queue; did you mean "test.pausable"?');
    }
    const types = (await api("GET", "/v1/types")).body.items as { type: string }[];
    expect(types.map((t) => t.type)).not.toContain("test.pausabel");
  });
});
