/**
 * Claims that wait (`waitMs`): parked on the type's wait object, woken the
 * moment a scope object makes a job of the type due (docs/pull-workers.md "Pull workers").
 */
import { describe, expect, it } from "vitest";
import { api, uniqueScope, uniqueType } from "../helpers/api";

describe("a claim with waitMs", () => {
  it("parks while nothing is due and answers with the job enqueued meanwhile, long before its wait ends", async () => {
    const type = uniqueType("wait");
    const started = Date.now();
    const parked = api("POST", "/v1/claim", { worker: "w", types: [type], waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 200)); // the claim is parked by now
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, scope: uniqueScope("wait") })).body.job.id;
    const r = await parked;
    expect(r.status).toBe(200);
    expect(r.body.jobs.map((j: { id: string }) => j.id)).toEqual([id]);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("answers empty when the wait ends with nothing due", async () => {
    const r = await api("POST", "/v1/claim", { worker: "w", types: [uniqueType("idle")], waitMs: 300 });
    expect(r.body.jobs).toEqual([]);
  });

  it("wakes when a delayed job comes due (the scope object's alarm tells it)", async () => {
    const type = uniqueType("delayed");
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, scope: uniqueScope("delayed"), delayMs: 500 })).body.job.id;
    const r = await api("POST", "/v1/claim", { worker: "w", types: [type], waitMs: 20_000 });
    expect(r.body.jobs.map((j: { id: string }) => j.id)).toEqual([id]);
  });

  it("wakes when a keyed job completes and frees its key's follower", async () => {
    const type = uniqueType("follower");
    const scope = uniqueScope("follower");
    const first = (await api("POST", "/v1/jobs", { type, payload: {}, scope, dedupeKey: "k", dedupeMode: "pending" })).body.job.id;
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    expect(leased.id).toBe(first);
    const follower = (await api("POST", "/v1/jobs", { type, payload: { n: 2 }, scope, dedupeKey: "k", dedupeMode: "pending" })).body.job.id;
    // The follower waits behind its key: nothing is due, so this claim parks.
    const parked = api("POST", "/v1/claim", { worker: "w2", types: [type], waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await api("POST", `/v1/jobs/${first}/complete`, { leaseToken: leased.leaseToken })).status).toBe(200);
    const r = await parked;
    expect(r.body.jobs.map((j: { id: string }) => j.id)).toEqual([follower]);
  });

  it("refuses a wait past 30 s, naming the field", async () => {
    const r = await api("POST", "/v1/claim", { worker: "w", types: ["x"], waitMs: 30_001 });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("waitMs");
  });
});
