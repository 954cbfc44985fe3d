/** Per-minute counters, their catalog roll-up, GET /v1/metrics in JSON and Prometheus text, and job timelines. */
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { homeOfJobId } from "../../src/job/home";
import { COUNTERS } from "../../src/metrics/counters";
import { retryFailed, type FailedCursor } from "../../src/scope/jobs/change";
import { pruneMetrics } from "../../src/scope/report/minute-counters";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, flushJobs, uniqueScope, uniqueType } from "../helpers/api";
import { env } from "../helpers/scope";

async function enqueue(body: Record<string, unknown>): Promise<string> {
  const r = await api("POST", "/v1/jobs", { payload: {}, ...body });
  expect(r.status).toBe(201);
  return r.body.job.id;
}

/** claimOne: the type's next due job; a retried job comes due after its jittered backoff (up to a second here), so this polls. */
async function claimOne(type: string): Promise<{ id: string; leaseToken: string }> {
  return vi.waitFor(
    async () => {
      const r = await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 1 });
      expect(r.body.jobs).toHaveLength(1);
      return r.body.jobs[0];
    },
    { timeout: 5000, interval: 20 },
  );
}

describe("metrics", () => {
  it("counts every transition once and serves counts, totals and minutes", async () => {
    const t = uniqueType("m");
    const scope = uniqueScope();
    const ids = [await enqueue({ type: t }), await enqueue({ type: t }), await enqueue({ type: t }), await enqueue({ type: t, scope })];
    // Cancelled first, so the claims below can only lease the three unscoped jobs.
    expect((await api("POST", `/v1/jobs/${ids[3]}/cancel`, {})).status).toBe(200);
    const a = await claimOne(t);
    expect((await api("POST", `/v1/jobs/${a.id}/complete`, { leaseToken: a.leaseToken })).status).toBe(200);
    const b = await claimOne(t);
    expect((await api("POST", `/v1/jobs/${b.id}/fail`, { leaseToken: b.leaseToken, error: "later", retryAfterMs: 60_000 })).body.outcome).toBe("retry_scheduled");
    const c = await claimOne(t);
    expect((await api("POST", `/v1/jobs/${c.id}/fail`, { leaseToken: c.leaseToken, error: "no", fatal: true })).body.outcome).toBe("failed");
    await flushJobs(...ids);

    const m = (await api("GET", `/v1/metrics?type=${t}`)).body;
    expect(m.types).toHaveLength(1);
    const expected = { enqueued: 4, started: 3, completed: 1, failed: 1, retried: 1, cancelled: 1 };
    expect(m.types[0]).toMatchObject({ type: t, pending: 0, scheduled: 1, running: 0, completed: 1, failed: 1, cancelled: 1, totals: expected });
    expect(m.types[0].failedByKind.fatal).toBe(1);
    // Every transition happened in the last minutes: the series adds up to the totals.
    const summed = Object.fromEntries(COUNTERS.map((k) => [k, m.minutes.reduce((s: number, r: any) => s + r[k], 0)]));
    expect(summed).toEqual(expected);
    expect(m.minutes.every((r: any) => r.type === t && r.minute % 60_000 === 0)).toBe(true);

    // Without a type filter: every configured type is listed, even with nothing counted yet.
    const all = (await api("GET", "/v1/metrics?minutes=5")).body;
    expect(all.types.map((x: any) => x.type)).toEqual(expect.arrayContaining(["demo.echo", "demo.noop", t]));
  });

  it("speaks Prometheus text when asked, with escaped labels and monotonic counters", async () => {
    const t = `${uniqueType("p")}."q\\x`;
    const id = await enqueue({ type: t });
    const j = await claimOne(t);
    await api("POST", `/v1/jobs/${j.id}/complete`, { leaseToken: j.leaseToken });
    await flushJobs(id);
    const res = await (exports as any).default.fetch(`http://queue.test/v1/metrics?type=${encodeURIComponent(t)}`, {
      headers: { authorization: "Bearer test-token", accept: "text/plain;version=0.0.4" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const label = t.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
    expect(text).toContain(`# TYPE edgequeue_jobs_completed_total counter`);
    expect(text).toContain(`edgequeue_jobs_completed_total{type="${label}"} 1`);
    expect(text).toContain(`edgequeue_jobs_enqueued_total{type="${label}"} 1`);
    expect(text).toContain(`edgequeue_jobs{type="${label}",state="completed"} 1`);
    expect(text).toContain(`edgequeue_oldest_pending_lag_seconds{type="${label}"} 0`);
    for (const line of text.trimEnd().split("\n")) {
      expect(line).toMatch(/^(# (HELP|TYPE) edgequeue_[a-z_]+ .+|edgequeue_[a-z_]+\{(?:[a-z_]+="(?:[^"\\]|\\.)*",?)+\} -?\d+(\.\d+)?)$/);
    }
    // JSON stays the default; the OpenAPI document names both.
    expect((await api("GET", "/v1/metrics")).headers.get("content-type")).toMatch(/application\/json/);
    const doc = (await api("GET", "/v1/openapi.json")).body;
    expect(Object.keys(doc.paths["/v1/metrics"].get.responses["200"].content)).toEqual(["application/json", "text/plain; version=0.0.4; charset=utf-8"]);
  });

  it("refuses a bad query, naming the field", async () => {
    const r = await api("GET", "/v1/metrics?minutes=0");
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("minutes");
    expect((await api("GET", "/v1/metrics", undefined, null)).status).toBe(401);
  });

  it("the catalog takes each home's counters as absolute values: a replayed or older report adds nothing", async () => {
    const catalog = env.CATALOG.getByName(`catalog-${crypto.randomUUID()}`);
    const now = Date.now();
    const minute = now - (now % 60_000);
    const row = (completed: number) => ({ minute, type: "x", enqueued: completed, started: completed, completed, failed: 0, retried: 0, cancelled: 0 });
    const report = (at: number, completed: number) => catalog.report({ home: "h", at, types: [], metrics: [row(completed)] });
    await report(now, 5);
    await report(now, 5); // replayed
    await report(now + 1, 3); // a lower value for the same minute (never happens unless a home was reset): totals do not go down
    await report(now + 2, 7);
    await catalog.report({ home: "h2", at: now, types: [], metrics: [row(2)] });
    // A minute past the retention would be counted again once dropped: it is ignored.
    await catalog.report({ home: "h3", at: now, types: [], metrics: [{ ...row(100), minute: minute - 25 * 3600_000 }] });
    const o = await runInDurableObject(catalog, (c: CatalogDO) => c.overview(2, null));
    expect(o.totals).toEqual([{ type: "x", enqueued: 9, started: 9, completed: 9, failed: 0, retried: 0, cancelled: 0 }]);
    expect(o.minutes).toEqual([{ minute, type: "x", enqueued: 9, started: 9, completed: 9, failed: 0, retried: 0, cancelled: 0 }]);
  });

  it("a scope object keeps its counters two hours, longer while the catalog has not had them", async () => {
    const scope = uniqueScope();
    const id = await enqueue({ type: uniqueType(), scope });
    const stub = env.SCOPE.getByName(homeOfJobId(id)!.name);
    // The minutes kept: a type's latest in its type_count row, the ones before in metric_minute (scope/report/minute-counters.ts).
    const count = () =>
      runInDurableObject(stub, (o: ScopeDO) =>
        o.store.sql.exec<{ n: number }>("SELECT (SELECT count(*) FROM metric_minute) + (SELECT count(*) FROM type_count WHERE m_enqueued + m_started + m_completed + m_failed + m_retried + m_cancelled > 0) AS n").one().n,
      );
    expect(await count()).toBe(1);
    await flushJobs(id);
    await runInDurableObject(stub, (o: ScopeDO) => pruneMetrics(o.store.sql, Date.now() + 3600_000, null));
    expect(await count()).toBe(1);
    // Not yet reported (the catalog was unreachable, say): kept past two hours, until reported or 23 hours.
    const since = Date.now();
    await runInDurableObject(stub, (o: ScopeDO) => pruneMetrics(o.store.sql, Date.now() + 3 * 3600_000, since));
    expect(await count()).toBe(1);
    await runInDurableObject(stub, (o: ScopeDO) => pruneMetrics(o.store.sql, Date.now() + 24 * 3600_000, since));
    expect(await count()).toBe(0);
    await enqueue({ type: uniqueType(), scope });
    await runInDurableObject(stub, (o: ScopeDO) => pruneMetrics(o.store.sql, Date.now() + 2 * 3600_000 + 120_000, null));
    expect(await count()).toBe(0);
  });
});

describe("timeline", () => {
  it("a job that succeeds first time is told by its row alone", async () => {
    const t = uniqueType("ok");
    const id = await enqueue({ type: t });
    const j = await claimOne(t);
    await api("POST", `/v1/jobs/${id}/complete`, { leaseToken: j.leaseToken });
    const job = (await api("GET", `/v1/jobs/${id}`)).body.job;
    const r = (await api("GET", `/v1/jobs/${id}/timeline`)).body;
    expect(r).toEqual({
      steps: [
        { at: job.createdAt, state: "pending", attempt: 0, note: null },
        { at: job.startedAt, state: "running", attempt: 1, note: null },
        { at: job.finishedAt, state: "completed", attempt: 1, note: null },
      ],
      earlier: 0,
    });
    const stub = env.SCOPE.getByName(homeOfJobId(id)!.name);
    const rows = await runInDurableObject(stub, (o: ScopeDO) => o.store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job_transition t JOIN job j ON j.seq = t.job_seq WHERE j.id = ?", id).one().n);
    expect(rows).toBe(0);
  });

  it("records each transition with its attempt and why", async () => {
    const t = uniqueType("tl");
    const id = await enqueue({ type: t });
    const first = await claimOne(t);
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: first.leaseToken, error: "flaky <b>upstream</b>", retryAfterMs: 0 });
    const second = await claimOne(t);
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: second.leaseToken, error: "bad input", fatal: true });
    await api("POST", `/v1/jobs/${id}/retry`, {});
    await api("POST", `/v1/jobs/${id}/cancel`, { reason: "not needed" });
    const r = await api("GET", `/v1/jobs/${id}/timeline`);
    expect(r.status).toBe(200);
    expect(r.body.steps.map((s: any) => [s.state, s.attempt, s.note])).toEqual([
      ["pending", 0, null],
      ["running", 1, null],
      ["pending", 1, "flaky <b>upstream</b>"],
      ["running", 2, null],
      ["failed", 2, "fatal: bad input"],
      ["pending", 0, "manual retry"],
      ["cancelled", 0, "not needed"],
    ]);
    expect(r.body.earlier).toBe(0);
    const at = r.body.steps.map((s: any) => s.at);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
    // The newest steps when asked for fewer, and how many were left out.
    const last2 = (await api("GET", `/v1/jobs/${id}/timeline?limit=2`)).body;
    expect(last2.steps.map((s: any) => s.state)).toEqual(["pending", "cancelled"]);
    expect(last2.earlier).toBe(5);
    expect((await api("GET", `/v1/jobs/${id}/timeline?limit=0`)).status).toBe(400);
  });

  it("is not found for an unknown job, and goes with the job when it is pruned", async () => {
    expect((await api("GET", "/v1/jobs/nope.x/timeline")).status).toBe(404);
    const scope = uniqueScope();
    const t = uniqueType();
    const id = await enqueue({ type: t, scope });
    await flushJobs(id);
    const j = await claimOne(t);
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: j.leaseToken, error: "again", retryAfterMs: 60_000 });
    await api("POST", `/v1/jobs/${id}/cancel`, {});
    const stub = env.SCOPE.getByName(homeOfJobId(id)!.name);
    const steps = () => runInDurableObject(stub, (o: ScopeDO) => o.store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job_transition").one().n);
    expect(await steps()).toBe(1); // the attempt that ended back in pending; creation, start and cancel are the job row's own
    expect((await api("GET", `/v1/jobs/${id}/timeline`)).body.steps.map((s: any) => s.state)).toEqual(["pending", "running", "pending", "cancelled"]);
    await flushJobs(id);
    expect((await api("POST", "/v1/prune", { olderThan: Date.now() + 1000 })).status).toBe(200);
    expect((await api("GET", `/v1/jobs/${id}`)).status).toBe(404);
    expect(await steps()).toBe(0);
  });
});

describe("retry failed in bulk", () => {
  async function failFatally(type: string, scope?: { type: string; id: string }, extra: Record<string, unknown> = {}): Promise<string> {
    const id = await enqueue({ type, ...(scope ? { scope } : {}), ...extra });
    await flushJobs(id); // a pull claim finds a scope's work through the catalog
    const j = await claimOne(type);
    expect(j.id).toBe(id);
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: j.leaseToken, error: "x", fatal: true });
    return id;
  }

  it("by scope, then by type; a job whose key a live job holds stays failed", async () => {
    const t = uniqueType("rf");
    const s1 = uniqueScope();
    const s2 = uniqueScope();
    const inS1 = [await failFatally(t, s1), await failFatally(t, s1)];
    const inS2 = await failFatally(t, s2);
    const r1 = await api("POST", "/v1/retry", { scopeType: s1.type, scopeId: s1.id });
    expect(r1.body).toEqual({ retried: 2, skipped: 0, nextCursor: null });
    for (const id of inS1) expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "pending", attempts: 0 });
    expect((await api("GET", `/v1/jobs/${inS2}`)).body.job.state).toBe("failed");

    await flushJobs(inS2);
    expect((await api("POST", "/v1/retry", { type: t })).body).toEqual({ retried: 1, skipped: 0, nextCursor: null });
    expect((await api("GET", `/v1/jobs/${inS2}`)).body.job.state).toBe("pending");

    const t2 = uniqueType("rk");
    const keyed = await failFatally(t2, s2, { dedupeKey: "k" });
    await enqueue({ type: t2, scope: s2, dedupeKey: "k" });
    expect((await api("POST", "/v1/retry", { type: t2, scopeType: s2.type, scopeId: s2.id })).body).toEqual({ retried: 0, skipped: 1, nextCursor: null });
    expect((await api("GET", `/v1/jobs/${keyed}`)).body.job.state).toBe("failed");
  });

  it("works through a home page by page, past jobs it has to skip", async () => {
    const t = uniqueType("rp");
    const scope = uniqueScope();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await failFatally(t, scope, i === 1 ? { dedupeKey: "held" } : {}));
    await enqueue({ type: t, scope, dedupeKey: "held" }); // holds the key: job 1 must be skipped, not retried forever
    const stub = env.SCOPE.getByName(homeOfJobId(ids[0]!)!.name);
    const pages = await runInDurableObject(stub, (o: ScopeDO) => {
      const out = [];
      for (let after: FailedCursor | null = null; ; ) {
        const page = retryFailed(o.store, t, after, Date.now(), 2);
        out.push([page.retried, page.skipped]);
        if (!page.next) return out;
        after = page.next;
      }
    });
    expect(pages).toEqual([[1, 1], [2, 0], [1, 0]]);
    expect((await api("GET", `/v1/jobs/${ids[1]}`)).body.job.state).toBe("failed");
  });

  it("refuses half a scope, naming the missing field", async () => {
    const r = await api("POST", "/v1/retry", { scopeType: "Tenant" });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("scopeId");
  });
});

describe("busiest scopes", () => {
  it("lists objects by live jobs, most first", async () => {
    const t = uniqueType("bs");
    const busy = uniqueScope("busy");
    const quiet = uniqueScope("quiet");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await enqueue({ type: t, scope: busy }));
    ids.push(await enqueue({ type: t, scope: quiet }));
    await flushJobs(...ids);
    const items = (await api("GET", "/v1/scopes?limit=500")).body.items;
    const at = (s: { id: string }) => items.findIndex((i: any) => i.scope?.id === s.id);
    expect(at(busy)).toBeGreaterThanOrEqual(0);
    expect(at(busy)).toBeLessThan(at(quiet));
    expect(items[at(busy)]).toMatchObject({ scope: busy, pending: 3 });
    for (let i = 1; i < items.length; i++) {
      const live = (x: any) => x.pending + x.scheduled + x.running;
      expect(live(items[i - 1])).toBeGreaterThanOrEqual(live(items[i]));
    }
  });
});
