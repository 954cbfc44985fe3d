/**
 * Depth caps (`types.<t>.maxDepth`, docs/configuration.md "Configuration"): an enqueue that
 * would leave more pending jobs of the type in its object than the cap is
 * refused with 429 queue_full and writes nothing — a batch as a whole, over
 * one object or several. demo.capped has maxDepth = 5 in the shipped config.
 */
import { describe, expect, it } from "vitest";
import { api, uniqueScope } from "../helpers/api";

const capped = (scope: object, extra: object = {}) => ({ type: "demo.capped", payload: {}, scope, delayMs: 3_600_000, ...extra });
const pendingIn = async (scope: { type: string; id: string }) =>
  (await api("GET", `/v1/jobs?scopeType=${encodeURIComponent(scope.type)}&scopeId=${encodeURIComponent(scope.id)}&state=pending`)).body.items.length;

describe("maxDepth", () => {
  it("the sixth pending job of demo.capped in one object is refused with 429 queue_full, naming the field", async () => {
    const scope = uniqueScope("cap");
    for (let i = 0; i < 5; i++) expect((await api("POST", "/v1/jobs", capped(scope, { id: `j${i}` }))).status).toBe(201);
    const r = await api("POST", "/v1/jobs", capped(scope, { id: "j5" }));
    expect(r.status).toBe(429);
    expect(r.body.error).toMatchObject({ code: "queue_full", details: { path: "type" } });
    expect(r.body.error.message).toContain("maxDepth is 5");
    expect(await pendingIn(scope)).toBe(5);
    // A duplicate of a job already there adds nothing, so it is not refused.
    expect((await api("POST", "/v1/jobs", capped(scope, { id: "j0" }))).status).toBe(200);
    // Another scope is another object: its own five.
    expect((await api("POST", "/v1/jobs", capped(uniqueScope("cap")))).status).toBe(201);
  });

  it("a batch that would pass the cap writes nothing, in one object or across several", async () => {
    const a = uniqueScope("capa");
    const b = uniqueScope("capb");
    for (let i = 0; i < 3; i++) await api("POST", "/v1/jobs", capped(a));
    const one = await api("POST", "/v1/jobs/batch", { jobs: [capped(a), capped(a), capped(a)] });
    expect(one.status).toBe(429);
    expect(one.body.error.details.path).toBe("jobs[0].type");
    expect(await pendingIn(a)).toBe(3);
    const across = await api("POST", "/v1/jobs/batch", { jobs: [capped(b), { type: "demo.noop", payload: {}, scope: b }, capped(a), capped(a), capped(a)] });
    expect(across.status).toBe(429);
    expect(across.body.error.details.path).toBe("jobs[2].type");
    expect(await pendingIn(b)).toBe(0);
    expect(await pendingIn(a)).toBe(3);
    expect((await api("POST", "/v1/jobs/batch", { jobs: [capped(b), capped(a), capped(a)] })).status).toBe(200);
    expect(await pendingIn(a)).toBe(5);
  });
});
