/** Each key mode under concurrent enqueues, through the API. */
import { describe, expect, it } from "vitest";
import { api, uniqueScope, uniqueType } from "../helpers/api";

async function burst(body: (i: number) => Record<string, unknown>, n = 20) {
  return Promise.all(Array.from({ length: n }, (_, i) => api("POST", "/v1/jobs", body(i))));
}

describe("keys over time, 20-way concurrent enqueues", () => {
  it.each([
    ["active", {}],
    ["pending", { dedupeMode: "pending" }],
    ["pending+latest", { dedupeMode: "pending", coalesce: "latest" }],
    ["debounce", { debounceMs: 60_000 }],
    ["throttle", { throttleMs: 60_000 }],
  ])("%s: one job for the burst", async (mode, options) => {
    const type = uniqueType();
    const results = await burst((i) => ({ type, payload: { i }, dedupeKey: "k", ...options }));
    expect(results.every((r) => r.status < 300)).toBe(true);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const ids = new Set(results.map((r) => r.body.job.id));
    expect(ids.size).toBe(1);
    const job = (await api("GET", `/v1/jobs/${[...ids][0]}`)).body.job;
    expect(job.dedupeMode).toBe(mode);
    if (mode === "pending+latest" || mode === "debounce") {
      // The payload is the last one applied, whichever request that was: one whose answer showed its own payload.
      const applied = results.filter((r, i) => r.body.job.payload.i === i).map((r) => r.body.job.payload.i);
      expect(applied).toContain(job.payload.i);
      expect(job.payload).toEqual({ i: job.payload.i });
    } else {
      expect(job.payload).toEqual(results.find((r) => r.status === 201)!.body.job.payload);
    }
  });

  it("a key live under another mode answers 409 conflict naming both", async () => {
    const type = uniqueType();
    await api("POST", "/v1/jobs", { type, payload: {}, dedupeKey: "k" });
    const r = await api("POST", "/v1/jobs", { type, payload: {}, dedupeKey: "k", throttleMs: 10 });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "conflict", details: { path: "dedupeKey" } });
    expect(r.body.error.message).toMatch(/mode active .* mode throttle/);
  });

  it("a batch over several scopes with one key conflict writes nothing in any of them", async () => {
    const type = uniqueType();
    const [a, b] = [uniqueScope("a"), uniqueScope("b")];
    await api("POST", "/v1/jobs", { type, payload: {}, scope: b, dedupeKey: "k" });
    const r = await api("POST", "/v1/jobs/batch", {
      jobs: [
        { type, payload: { n: 1 }, scope: a, id: "first" },
        { type, payload: { n: 2 }, scope: a, id: "second", dedupeKey: "other" },
        { type, payload: { n: 3 }, scope: b, dedupeKey: "k", throttleMs: 10 },
      ],
    });
    expect(r.status).toBe(409);
    expect(r.body.error.details).toMatchObject({ path: "jobs[2].dedupeKey", index: 2 });
    const inA = await api("GET", `/v1/jobs?scopeType=${a.type}&scopeId=${a.id}`);
    expect(inA.body.items).toEqual([]);
  });

  it.each([
    [{ dedupeMode: "pending" }, "dedupeMode"],
    [{ dedupeKey: "k", debounceMs: 5, throttleMs: 5 }, "throttleMs"],
    [{ dedupeKey: "k", debounceMs: 5, coalesce: "latest" }, "debounceMs"],
    [{ dedupeKey: "k", debounceMs: 5, delayMs: 5 }, "debounceMs"],
    [{ dedupeKey: "k", dedupeMode: "sometimes" }, "dedupeMode"],
  ])("refuses %j naming %s", async (options, field) => {
    const r = await api("POST", "/v1/jobs", { type: "t", payload: {}, ...options });
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: any) => d.path)).toContain(field);
  });
});
