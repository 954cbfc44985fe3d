/**
 * Every path of API.md through the real coordinator Worker, its Durable
 * Objects and SQLite.
 */
import { describe, expect, it } from "vitest";
import { api, flushJobs, uniqueScope, uniqueType, type ApiResponse } from "../helpers/api";

async function enqueue(body: Record<string, unknown>) {
  const r = await api("POST", "/v1/jobs", { payload: {}, ...body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body.job;
}

async function claimOne(type: string, extra: Record<string, unknown> = {}) {
  const r = await api("POST", "/v1/claim", { worker: "w1", types: [type], ...extra });
  expect(r.status).toBe(200);
  return r.body.jobs[0];
}

describe("POST /v1/jobs", () => {
  it("201 with the Job object", async () => {
    const type = uniqueType();
    const r = await api("POST", "/v1/jobs", { type, payload: { to: "a@b.c" }, priority: 2, tags: ["x"], maxAttempts: 5, timeoutMs: 60_000 });
    expect(r.status).toBe(201);
    expect(r.body.created).toBe(true);
    expect(r.body.job).toMatchObject({
      type,
      payload: { to: "a@b.c" },
      scope: null,
      state: "pending",
      failureKind: null,
      priority: 2,
      attempts: 0,
      maxAttempts: 5,
      timeoutMs: 60_000,
      dedupeKey: null,
      tags: ["x"],
      lastError: null,
      result: null,
      startedAt: null,
      finishedAt: null,
    });
    expect(typeof r.body.job.id).toBe("string");
    expect(r.body.job.runAt).toBe(r.body.job.createdAt);
  });

  it("200 with the existing job for the same client id, and for a live dedupe key", async () => {
    const type = uniqueType();
    const a = await api("POST", "/v1/jobs", { type, payload: {}, id: "order-42" });
    const b = await api("POST", "/v1/jobs", { type, payload: { other: 1 }, id: "order-42" });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ created: false, job: { id: a.body.job.id, payload: {} } });
    expect(a.body.job.id).toMatch(/\.order-42$/);

    const scope = uniqueScope();
    const c = await api("POST", "/v1/jobs", { type, scope, payload: {}, dedupeKey: "k" });
    const d = await api("POST", "/v1/jobs", { type: uniqueType(), scope, payload: {}, dedupeKey: "k" });
    expect(d.status).toBe(200);
    expect(d.body.job.id).toBe(c.body.job.id);
  });

  it("a 20-way concurrent enqueue with one dedupe key creates one job", async () => {
    const type = uniqueType();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api("POST", "/v1/jobs", { type, payload: { i }, dedupeKey: "one" })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.job.id)).size).toBe(1);
  });

  it("delayMs and runAt set runAt; giving both is refused naming delayMs", async () => {
    const type = uniqueType();
    const before = Date.now();
    const a = await enqueue({ type, delayMs: 60_000 });
    expect(a.runAt).toBeGreaterThanOrEqual(before + 60_000);
    const b = await enqueue({ type, runAt: 1_790_000_000_000 });
    expect(b.runAt).toBe(1_790_000_000_000);
    const c = await api("POST", "/v1/jobs", { type, payload: {}, runAt: 1, delayMs: 1 });
    expect(c.status).toBe(400);
    expect(c.body.error.details).toEqual([{ path: "delayMs", message: "runAt and delayMs are exclusive; give one" }]);
  });

  it("scoped jobs live in the scope's object whatever their type; unscoped ones in their type's shards", async () => {
    const scope = uniqueScope();
    const a = await enqueue({ type: uniqueType(), scope });
    const b = await enqueue({ type: uniqueType(), scope });
    expect(a.id.split(".")[0]).toBe(b.id.split(".")[0]);
    expect(a.scope).toEqual(scope);
    const shards = new Set<string>();
    for (let i = 0; i < 24; i++) shards.add((await enqueue({ type: "sharded.job", dedupeKey: `k${i}-${crypto.randomUUID()}` })).id.split(".")[0]);
    expect(shards.size).toBeGreaterThan(1);
    expect(shards.size).toBeLessThanOrEqual(4);
  });
});

describe("POST /v1/jobs/batch", () => {
  it("enqueues in call order across homes", async () => {
    const type = uniqueType();
    const scope = uniqueScope();
    const r = await api("POST", "/v1/jobs/batch", {
      jobs: [
        { type, payload: { i: 0 } },
        { type, payload: { i: 1 }, scope },
        { type, payload: { i: 2 }, dedupeKey: "d" },
        { type, payload: { i: 3 }, dedupeKey: "d" },
      ],
      return: "jobs",
    });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: any) => [x.job.payload.i, x.created])).toEqual([
      [0, true],
      [1, true],
      [2, true],
      [2, false],
    ]);
  });

  it("answers ids and created by default (a duplicate's id is its key holder's); return: jobs adds each view", async () => {
    const type = uniqueType();
    const jobs = [{ type, payload: { i: 0 } }, { type, payload: { i: 1 }, dedupeKey: "d" }, { type, payload: { i: 2 }, dedupeKey: "d" }];
    const lean = await api("POST", "/v1/jobs/batch", { jobs });
    expect(lean.status).toBe(200);
    expect(lean.body.results.map((x: any) => Object.keys(x).sort())).toEqual([["created", "id"], ["created", "id"], ["created", "id"]]);
    expect(lean.body.results.map((x: any) => x.created)).toEqual([true, true, false]);
    expect(lean.body.results[2].id).toBe(lean.body.results[1].id);
    expect((await api("GET", `/v1/jobs/${encodeURIComponent(lean.body.results[0].id)}`)).body.job.payload).toEqual({ i: 0 });
    const full = await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: { i: 3 }, dedupeKey: "d" }], return: "jobs" });
    expect(full.body.results[0]).toMatchObject({ id: lean.body.results[1].id, created: false, job: { id: lean.body.results[1].id, payload: { i: 1 } } });
    const bad = await api("POST", "/v1/jobs/batch", { jobs, return: "views" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("return");
  });

  it("one invalid item refuses the whole call, names its index, and writes nothing", async () => {
    const type = uniqueType();
    const r = await api("POST", "/v1/jobs/batch", {
      jobs: [{ type, payload: {} }, { type, payload: {} }, { type, payload: {} }, { type, payload: [] }],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.details[0].path).toBe("jobs[3].payload");
    const claim = await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 10 });
    expect(claim.body.jobs).toEqual([]);
  });

  it("refuses 0 and more than 1,000 items", async () => {
    expect((await api("POST", "/v1/jobs/batch", { jobs: [] })).status).toBe(400);
    const many = Array.from({ length: 1001 }, () => ({ type: "x", payload: {} }));
    const r = await api("POST", "/v1/jobs/batch", { jobs: many });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("jobs");
  });
});

describe("GET /v1/jobs/{id}", () => {
  it("200 with the job, 404 for unknown and malformed ids", async () => {
    const job = await enqueue({ type: uniqueType() });
    const r = await api("GET", `/v1/jobs/${job.id}`);
    expect(r.status).toBe(200);
    expect(r.body.job).toEqual(job);
    const missing = await api("GET", `/v1/jobs/${job.id.split(".")[0]}.nope`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect((await api("GET", "/v1/jobs/not-an-id")).status).toBe(404);
    // A well-formed id for a shard the type does not have names no object.
    const shard9 = `${btoa("type:sharded.job:9").replace(/=+$/, "")}.x`;
    expect((await api("GET", `/v1/jobs/${shard9}`)).status).toBe(404);
    const long = await api("GET", `/v1/jobs/${"x".repeat(3000)}`);
    expect(long.status).toBe(400);
    expect(long.body.error.details[0].path).toBe("id");
    expect((await api("GET", "/v1/jobs/%F0%9F%92%A9.x")).status).toBe(404);
  });

  it("a caller's own id is found with its type or its scope, as BullMQ's getJob finds it; without either it is not", async () => {
    const type = uniqueType("own");
    const unscoped = await enqueue({ type, id: "thumb-1" });
    const scope = uniqueScope("own");
    const scoped = await enqueue({ type, id: "thumb-1", scope, dedupeKey: "k" });
    // sharded.job has 4 shards, and a dedupe key, not the id, picks one: every shard is asked.
    const sharded = await enqueue({ type: "sharded.job", id: `own-${crypto.randomUUID()}`, dedupeKey: crypto.randomUUID() });
    expect((await api("GET", "/v1/jobs/thumb-1")).status).toBe(404);
    expect((await api("GET", `/v1/jobs/thumb-1?type=${type}`)).body.job.id).toBe(unscoped.id);
    expect((await api("GET", `/v1/jobs/thumb-1?scopeType=${scope.type}&scopeId=${scope.id}`)).body.job.id).toBe(scoped.id);
    expect((await api("GET", `/v1/jobs/${sharded.id.split(".").slice(1).join(".")}?type=sharded.job`)).body.job.id).toBe(sharded.id);
    // A full id is found with a type too; a wrong type or scope finds nothing; half a scope is refused naming the half.
    expect((await api("GET", `/v1/jobs/${unscoped.id}?type=${type}`)).body.job.id).toBe(unscoped.id);
    expect((await api("GET", `/v1/jobs/thumb-1?type=${type}.other`)).status).toBe(404);
    const half = await api("GET", `/v1/jobs/thumb-1?scopeType=${scope.type}`);
    expect([half.status, half.body.error.details[0].path]).toEqual([400, "scopeId"]);
  });
});

describe("pull workers", () => {
  it("claim → heartbeat → complete", async () => {
    const type = uniqueType();
    const job = await enqueue({ type, payload: { n: 1 } });
    const leased = await claimOne(type, { leaseMs: 60_000 });
    expect(leased).toMatchObject({ id: job.id, state: "running", attempts: 1 });
    expect(leased.leaseExpiresAt).toBeGreaterThan(Date.now() + 50_000);
    const hb = await api("POST", `/v1/jobs/${job.id}/heartbeat`, { leaseToken: leased.leaseToken, leaseMs: 120_000 });
    expect(hb.status).toBe(200);
    expect(hb.body.leaseExpiresAt).toBeGreaterThan(Date.now() + 100_000);
    const done = await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: leased.leaseToken, result: { sent: true } });
    expect(done.status).toBe(200);
    expect(done.body.job).toMatchObject({ state: "completed", result: { sent: true } });
    expect(done.body.job.finishedAt).not.toBeNull();
    const again = await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: leased.leaseToken });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_terminal");
  });

  it("a repeated type in types does not shrink the claim", async () => {
    const type = uniqueType();
    await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: {} }, { type, payload: {} }] });
    const r = await api("POST", "/v1/claim", { worker: "w", types: [type, type], limit: 2 });
    expect(r.body.jobs).toHaveLength(2);
  });

  it("an empty list when nothing is due", async () => {
    const r = await api("POST", "/v1/claim", { worker: "w", types: [uniqueType()] });
    expect(r.body).toEqual({ jobs: [], askedAt: expect.any(Number), answeredAt: expect.any(Number) });
  });

  it("50 parallel claims over 20 jobs never return one job twice", async () => {
    const type = uniqueType();
    await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 20 }, (_, i) => ({ type, payload: { i } })) });
    const claims = await Promise.all(Array.from({ length: 50 }, () => api("POST", "/v1/claim", { worker: "w", types: [type] })));
    const ids = claims.flatMap((c) => c.body.jobs.map((j: any) => j.id));
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  it("claims up to limit across several homes", async () => {
    const type = uniqueType();
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await enqueue({ type, scope: uniqueScope() }));
    await flushJobs(...jobs.map((j) => j.id));
    const r = await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 2 });
    expect(r.body.jobs).toHaveLength(2);
    const rest = await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 });
    expect(rest.body.jobs).toHaveLength(1);
  });

  it("a stale lease token changes nothing and answers 409 lease_lost with the reason", async () => {
    const type = uniqueType();
    const job = await enqueue({ type });
    const leased = await claimOne(type);
    const r = await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: "0".repeat(32) });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "lease_lost", details: { reason: "stale_token", state: "running" } });
    expect((await api("GET", `/v1/jobs/${job.id}`)).body.job).toMatchObject({ state: "running", attempts: 1 });
    expect((await api("POST", `/v1/jobs/${job.id}/heartbeat`, { leaseToken: "x" })).status).toBe(409);
    expect((await api("POST", `/v1/jobs/${job.id}/fail`, { leaseToken: "x", error: "e" })).status).toBe(409);
    expect((await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: leased.leaseToken })).status).toBe(200);
  });

  it("fail schedules a retry, and the last attempt fails with retries_exhausted", async () => {
    const type = uniqueType();
    const job = await enqueue({ type, maxAttempts: 2 });
    const first = await claimOne(type);
    const f1 = await api("POST", `/v1/jobs/${job.id}/fail`, { leaseToken: first.leaseToken, error: "smtp down", retryAfterMs: 0 });
    expect(f1.status).toBe(200);
    expect(f1.body).toMatchObject({ outcome: "retry_scheduled", job: { state: "pending", attempts: 1, lastError: "smtp down" } });
    // Full jitter can pick 0 ms only by chance; wait for the retry by claiming once it is due.
    const due = f1.body.job.runAt;
    expect(due).toBeGreaterThanOrEqual(Date.now() - 5);
    expect(due).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("fatal fails at once with failureKind fatal", async () => {
    const type = uniqueType();
    const job = await enqueue({ type, maxAttempts: 5 });
    const leased = await claimOne(type);
    const r = await api("POST", `/v1/jobs/${job.id}/fail`, { leaseToken: leased.leaseToken, error: "bad address", fatal: true });
    expect(r.body).toMatchObject({ outcome: "failed", job: { state: "failed", failureKind: "fatal", lastError: "bad address" } });
  });
});

describe("cancel and retry", () => {
  it("cancel a pending job; a second cancel is already_terminal", async () => {
    const job = await enqueue({ type: uniqueType() });
    const r = await api("POST", `/v1/jobs/${job.id}/cancel`, { reason: "not needed" });
    expect(r.status).toBe(200);
    expect(r.body.job).toMatchObject({ state: "cancelled", cancelReason: "not needed" });
    const again = await api("POST", `/v1/jobs/${job.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_terminal");
  });

  it("cancelling a running job revokes its lease", async () => {
    const type = uniqueType();
    const job = await enqueue({ type });
    const leased = await claimOne(type);
    await api("POST", `/v1/jobs/${job.id}/cancel`, {});
    const r = await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: leased.leaseToken });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "lease_lost", details: { reason: "cancelled" } });
  });

  it("retry brings a cancelled job back; retrying a pending job is a conflict", async () => {
    const job = await enqueue({ type: uniqueType() });
    expect((await api("POST", `/v1/jobs/${job.id}/retry`)).status).toBe(409);
    await api("POST", `/v1/jobs/${job.id}/cancel`);
    const r = await api("POST", `/v1/jobs/${job.id}/retry`);
    expect(r.status).toBe(200);
    expect(r.body.job).toMatchObject({ state: "pending", attempts: 0, lastError: null, cancelReason: null });
  });

  it("POST /v1/scopes/{type}/{id}/cancel cancels the scope's jobs", async () => {
    const scope = uniqueScope();
    const type = uniqueType();
    for (let i = 0; i < 3; i++) await enqueue({ type, scope });
    const leased = await claimOne(type);
    await flushJobs(leased?.id ?? "");
    const pendingOnly = await api("POST", `/v1/scopes/${scope.type}/${scope.id}/cancel`, { pendingOnly: true });
    expect(pendingOnly.body).toEqual({ cancelled: 2 });
    const all = await api("POST", `/v1/scopes/${scope.type}/${scope.id}/cancel`, {});
    expect(all.body).toEqual({ cancelled: 1 });
  });
});

describe("GET /v1/jobs (listing)", () => {
  it("pages through one scope with a cursor, filtered by type, state and tag", async () => {
    const scope = uniqueScope();
    const type = uniqueType();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await enqueue({ type, scope, tags: i % 2 ? ["odd"] : [] })).id);
    await enqueue({ type: uniqueType(), scope });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: URLSearchParams = new URLSearchParams({ scopeType: scope.type, scopeId: scope.id, type, limit: "2", ...(cursor ? { cursor } : {}) });
      const r: ApiResponse = await api("GET", `/v1/jobs?${q}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((j: any) => j.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const odd = await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}&tag=odd`);
    expect(odd.body.items.map((j: any) => j.id)).toEqual([ids[1], ids[3]]);
    const cancelled = await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}&state=cancelled`);
    expect(cancelled.body).toEqual({ items: [], nextCursor: null });
  });

  it("lists a type across scopes and shards with no job twice", async () => {
    const type = uniqueType();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await enqueue({ type, scope: uniqueScope() })).id);
    for (let i = 0; i < 3; i++) ids.push((await enqueue({ type })).id);
    await flushJobs(...ids);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: ApiResponse = await api("GET", `/v1/jobs?type=${type}&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...r.body.items.map((j: any) => j.id));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it("refuses a malformed cursor and a half scope", async () => {
    const r = await api("GET", "/v1/jobs?cursor=!!!");
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("cursor");
    const half = await api("GET", "/v1/jobs?scopeType=A");
    expect(half.body.error.details[0].path).toBe("scopeId");
    expect((await api("GET", "/v1/jobs?limit=0")).body.error.details[0].path).toBe("limit");
  });
});

describe("GET /v1/stats", () => {
  it("counts by state across objects, with scheduled apart from due", async () => {
    const type = uniqueType();
    // One due job at a time while claiming, so each claim takes the job meant.
    const running = await enqueue({ type, scope: uniqueScope() });
    await flushJobs(running.id);
    expect((await claimOne(type)).id).toBe(running.id);
    const failing = await enqueue({ type, scope: uniqueScope(), maxAttempts: 1 });
    await flushJobs(failing.id);
    const f = await claimOne(type);
    expect(f.id).toBe(failing.id);
    await api("POST", `/v1/jobs/${f.id}/fail`, { leaseToken: f.leaseToken, error: "x" });
    const ids = [running.id, failing.id];
    const firstDue = await enqueue({ type });
    ids.push(firstDue.id);
    ids.push((await enqueue({ type, scope: uniqueScope() })).id);
    ids.push((await enqueue({ type, delayMs: 3_600_000 })).id);
    await flushJobs(...ids);
    const r = await api("GET", `/v1/stats?type=${type}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      pending: 2,
      scheduled: 1,
      running: 1,
      completed: 0,
      failed: 1,
      cancelled: 0,
      failedByKind: { retries_exhausted: 1, fatal: 0, stalled: 0, timeout: 0 },
    });
    // The oldest due job is the first of the two: its wait so far, as the catalog last heard.
    const waited = Date.now() - firstDue.runAt;
    expect(r.body.oldestPendingLagMs).toBeGreaterThanOrEqual(0);
    expect(r.body.oldestPendingLagMs).toBeLessThanOrEqual(waited);
    const all = await api("GET", "/v1/stats");
    expect(all.body.pending).toBeGreaterThanOrEqual(2);
  });
});

describe("POST /v1/prune", () => {
  it("deletes terminal jobs finished before olderThan, across objects", async () => {
    const type = uniqueType();
    const a = await enqueue({ type, scope: uniqueScope() });
    const b = await enqueue({ type });
    await api("POST", `/v1/jobs/${a.id}/cancel`);
    await api("POST", `/v1/jobs/${b.id}/cancel`);
    await flushJobs(a.id, b.id);
    const r = await api("POST", "/v1/prune", { olderThan: Date.now() + 1000, states: ["cancelled"] });
    expect(r.status).toBe(200);
    expect(r.body.deleted).toBeGreaterThanOrEqual(2);
    expect((await api("GET", `/v1/jobs/${a.id}`)).status).toBe(404);
    expect((await api("GET", `/v1/jobs/${b.id}`)).status).toBe(404);
  });
});

describe("GET /v1/health", () => {
  it("answers without a token", async () => {
    const r = await api("GET", "/v1/health", undefined, null);
    expect(r.status).toBe(200);
    // With budgets configured (the vitest config has one), what they hold (docs/operating.md "Spend caps").
    expect(r.body).toMatchObject({ ok: true, version: "0.1.0", budgets: { paused: expect.any(Array), warned: expect.any(Array) } });
    expect(Object.keys(r.body).sort()).toEqual(["budgets", "ok", "version"]);
  });
});
