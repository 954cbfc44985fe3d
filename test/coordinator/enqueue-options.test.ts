/** Enqueue options and answers (docs/http-api.md "The HTTP API"): a job's own backoff; an id still taken after retention. */
import { describe, expect, it } from "vitest";
import { api, flushJobs, uniqueType } from "../helpers/api";

describe("enqueue backoff", () => {
  it("is kept with the job (maxMs defaulting to the larger of baseMs and 5 minutes); a cap below its base is refused, naming the field", async () => {
    const type = uniqueType("bo");
    const fixed = (await api("POST", "/v1/jobs", { type, payload: {}, backoff: { kind: "fixed", baseMs: 2_000 } })).body.job;
    expect(fixed.backoff).toEqual({ kind: "fixed", baseMs: 2_000, maxMs: 300_000 });
    const plain = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job;
    expect(plain.backoff).toBeNull();
    const bad = await api("POST", "/v1/jobs", { type, payload: {}, backoff: { baseMs: 5_000, maxMs: 1_000 } });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "backoff.maxMs"]);
    const kind = await api("POST", "/v1/jobs", { type, payload: {}, backoff: { kind: "linear", baseMs: 1 } });
    expect([kind.status, kind.body.error.details[0].path]).toEqual([400, "backoff.kind"]);
  });
});

describe("ids after retention", () => {
  it("an enqueue with the id of a job pruned since answers 200 {created: false, job: null} and creates nothing", async () => {
    const type = uniqueType("tomb");
    const created = await api("POST", "/v1/jobs", { type, payload: {}, id: "only-once" });
    expect(created.status).toBe(201);
    const [j] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    await api("POST", `/v1/jobs/${j.id}/complete`, { leaseToken: j.leaseToken });
    await flushJobs(j.id);
    expect((await api("POST", "/v1/prune", { olderThan: Date.now() + 1, states: ["completed"] })).body.deleted).toBeGreaterThanOrEqual(1);
    const again = await api("POST", "/v1/jobs", { type, payload: {}, id: "only-once" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: created.body.job.id, job: null, created: false });
    expect((await api("GET", `/v1/jobs/${created.body.job.id}`)).status).toBe(404);
  });
});

describe("the answer's job views", () => {
  it("a batch answers each job exactly as GET then reads it: created, or the job its key or id is answered with", async () => {
    const type = uniqueType("views");
    const scope = { type: "Views", id: crypto.randomUUID() };
    await api("POST", "/v1/jobs", { type, payload: { held: true }, scope, dedupeKey: "held" });
    const jobs = [
      { type, payload: { n: 0, nested: { a: [1, "two", null, -0, 1.5e-7] } }, scope },
      { type, payload: {}, scope, delayMs: 60_000, priority: 7, tags: ["a", "b"] },
      { type, payload: { n: 2 }, scope, runAt: Date.now() + 120_000, maxAttempts: 9, timeoutMs: 4_000 },
      { type, payload: { n: 3 }, scope, backoff: { kind: "exponential", baseMs: 1_000 } },
      { type, payload: { n: 4 }, scope, dedupeKey: "k4" },
      { type, payload: { n: 5 }, scope, dedupeKey: "k5", dedupeMode: "pending", coalesce: "latest" },
      { type, payload: { n: 6 }, scope, dedupeKey: "k6", debounceMs: 5_000 },
      { type, payload: { n: 7 }, scope, dedupeKey: "held" },
      { type, payload: { n: 8 }, scope, id: "same-id" },
      { type, payload: { n: 9 }, scope, id: "same-id" },
    ];
    const r = await api("POST", "/v1/jobs/batch", { jobs, return: "jobs" });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { created: boolean }) => x.created)).toEqual([true, true, true, true, true, true, true, false, true, false]);
    // A duplicate is answered with the job that holds its key or id: read that one.
    for (const x of r.body.results as { id: string; job: Record<string, unknown> & { id: string } }[]) {
      const got = await api("GET", `/v1/jobs/${encodeURIComponent(x.job.id)}`);
      expect(x.job).toEqual(got.body.job);
    }
  });
});

describe("unlimited attempts", () => {
  it('maxAttempts "unlimited" (Infinity over RPC, or in a config) keeps retrying: the job holds 1,000,000,000 attempts', async () => {
    const type = uniqueType("forever");
    const job = (await api("POST", "/v1/jobs", { type, payload: {}, maxAttempts: "unlimited" })).body.job;
    expect(job.maxAttempts).toBe(1_000_000_000);
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const failed = await api("POST", `/v1/jobs/${leased.id}/fail`, { leaseToken: leased.leaseToken, error: "again" });
    expect(failed.body.job).toMatchObject({ state: "pending", attempts: 1, maxAttempts: 1_000_000_000 });
    const over = await api("POST", "/v1/jobs", { type, payload: {}, maxAttempts: 1001 });
    expect([over.status, over.body.error.details[0].path]).toEqual([400, "maxAttempts"]);
    const { parseConfig } = await import("../../src/config/load");
    expect(parseConfig({ defaults: { maxAttempts: "unlimited" }, types: { t: { maxAttempts: Infinity } } }).typeSettings("t").maxAttempts).toBe(1_000_000_000);
  });
});
