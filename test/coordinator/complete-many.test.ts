/**
 * POST /v1/jobs/complete: several leased jobs completed in one call, each
 * answered as its own complete would be; and a claim carrying completions
 * (`complete`), a pull worker's complete and next claim in one request
 * (docs/pull-workers.md "Pull workers").
 */
import { describe, expect, it } from "vitest";
import { api, flushJobs, uniqueScope, uniqueType } from "../helpers/api";

describe("POST /v1/jobs/complete", () => {
  it("completes jobs from several objects at once and answers each item on its own", async () => {
    const type = uniqueType("many");
    const scopes = [uniqueScope("a"), uniqueScope("b")];
    const ids: string[] = [];
    for (const scope of scopes) {
      const r = await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: {}, scope }, { type, payload: {}, scope }] });
      ids.push(...r.body.results.map((x: { id: string }) => x.id));
    }
    await flushJobs(...ids); // the catalog knows both scopes, so one claim reaches both
    const jobs: { id: string; leaseToken: string }[] = [];
    // A claim splits its limit over the objects it asks, so one may come back short: claim until all four are leased.
    for (let i = 0; i < 4 && jobs.length < 4; i++) jobs.push(...(await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 4 - jobs.length })).body.jobs);
    expect(jobs).toHaveLength(4);
    const [a, b, c, d] = jobs as [typeof jobs[0], typeof jobs[0], typeof jobs[0], typeof jobs[0]];
    const r = await api("POST", "/v1/jobs/complete", {
      items: [
        { id: a.id, leaseToken: a.leaseToken, result: { n: 1 } },
        { id: b.id, leaseToken: "not-the-token" },
        { id: c.id, leaseToken: c.leaseToken },
        { id: d.id, leaseToken: d.leaseToken, result: { big: "x".repeat(200_000) } },
        { id: "nope", leaseToken: "t" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { ok: boolean; error?: { code: string } }) => (x.ok ? "ok" : x.error!.code))).toEqual([
      "ok",
      "lease_lost",
      "ok",
      "payload_too_large",
      "not_found",
    ]);
    expect((await api("GET", `/v1/jobs/${a.id}`)).body.job).toMatchObject({ state: "completed", result: { n: 1 } });
    expect((await api("GET", `/v1/jobs/${b.id}`)).body.job.state).toBe("running");
    expect((await api("GET", `/v1/jobs/${c.id}`)).body.job).toMatchObject({ state: "completed", result: null });
    // Twice: each item now answers as a late complete does.
    const again = await api("POST", "/v1/jobs/complete", { items: [{ id: a.id, leaseToken: a.leaseToken }] });
    expect(again.body.results[0].error.code).toBe("already_terminal");
  });

  it("an item's logs are kept with its job when its completion lands, and only then", async () => {
    const type = uniqueType("many-logs");
    await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: {} }, { type, payload: {} }] });
    const [a, b] = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 2 })).body.jobs;
    const logs = [{ at: 5, message: "done", fields: { n: 1 } }];
    const r = await api("POST", "/v1/jobs/complete", { items: [{ id: a.id, leaseToken: a.leaseToken, logs }, { id: b.id, leaseToken: "not-the-token", logs }] });
    expect(r.body.results.map((x: { ok: boolean }) => x.ok)).toEqual([true, false]);
    expect((await api("GET", `/v1/jobs/${a.id}/logs`)).body.items).toEqual([{ at: 5, attempt: 1, message: "done", fields: { n: 1 } }]);
    expect((await api("GET", `/v1/jobs/${b.id}/logs`)).body.items).toEqual([]);
  });

  it("refuses an empty or malformed call as a whole, naming the field", async () => {
    const empty = await api("POST", "/v1/jobs/complete", { items: [] });
    expect([empty.status, empty.body.error.details[0].path]).toEqual([400, "items"]);
    const bad = await api("POST", "/v1/jobs/complete", { items: [{ id: "x" }] });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "items[0].leaseToken"]);
  });
});

describe("POST /v1/claim with complete", () => {
  it("completes first, each item answered as POST /v1/jobs/complete answers it, then leases, without waiting", async () => {
    const type = uniqueType("carry");
    const ids = (await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 3 }, (_, n) => ({ type, payload: { n } })) })).body.results.map((x: { id: string }) => x.id);
    const [first] = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 1 })).body.jobs;
    const next = await api("POST", "/v1/claim", {
      worker: "w",
      types: [type],
      limit: 5,
      waitMs: 10_000,
      complete: [
        { id: first.id, leaseToken: first.leaseToken, result: { done: 1 } },
        { id: ids[2], leaseToken: "not-the-token" },
      ],
    });
    expect(next.status).toBe(200);
    expect(next.body.completed.map((x: { ok: boolean; error?: { code: string } }) => (x.ok ? "ok" : x.error!.code))).toEqual(["ok", "lease_lost"]);
    expect(next.body.jobs.map((j: { id: string }) => j.id).sort()).toEqual(ids.filter((id: string) => id !== first.id).sort());
    expect((await api("GET", `/v1/jobs/${first.id}`)).body.job).toMatchObject({ state: "completed", result: { done: 1 } });
    // Nothing due: a claim that carries completions answers at once, its waitMs unused.
    const [a] = next.body.jobs;
    const t0 = Date.now();
    const idle = await api("POST", "/v1/claim", { worker: "w", types: [type], waitMs: 10_000, complete: [{ id: a.id, leaseToken: a.leaseToken }] });
    expect([idle.body.jobs, idle.body.completed]).toEqual([[], [{ id: a.id, ok: true }]]);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it("a claim the queue refuses writes none of its completions", async () => {
    const type = uniqueType("carry-refused");
    await api("POST", "/v1/jobs", { type, payload: {} });
    const [job] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const refused = await api("POST", "/v1/claim", { worker: "w", types: ["demo.noop"], complete: [{ id: job.id, leaseToken: job.leaseToken }] });
    expect([refused.status, refused.body.error.details[0].path]).toEqual([400, "types[0]"]);
    expect((await api("GET", `/v1/jobs/${job.id}`)).body.job.state).toBe("running");
  });
});
