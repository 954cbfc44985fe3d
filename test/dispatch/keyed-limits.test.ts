/**
 * Keyed limits end to end (docs/guards.md "Keyed limits"): 10 tenants × 20 jobs over several scope objects, pushed
 * (demo.tenant, the shipped config: at most 2 per tenant) and pulled (pull.tenant, the same limit, run by pull
 * workers). No tenant ever runs more than its limit, and the tenants run side by side. A job whose key the
 * payload lacks is refused naming the path; a concurrencyKey counts the job under its own key.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { JobContext } from "../../src/handler";
import { createWorker } from "../../src/pull-worker";
import { api, flushJobs, isTerminal, TOKEN, waitForJob } from "../helpers/api";
import { maxOverlap, type Span } from "../helpers/probe";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

interface Ran {
  tenant: string;
  startedAt: number;
  finishedAt: number;
}

const TENANTS = 10;
const PER_TENANT = 20;

function jobs(type: string, run: string, ms: number) {
  return Array.from({ length: TENANTS * PER_TENANT }, (_, i) => ({
    type,
    payload: { tenant: `${run}-t${i % TENANTS}`, ms },
    // The tenants' jobs live in several scope objects: a key's limit holds across them.
    scope: { type: "Keyed", id: `${run}-s${i % 3}` },
  }));
}

const spans = (ran: Ran[]): Span[] => ran.map((r, i) => ({ id: String(i), key: r.tenant, startedAt: r.startedAt, finishedAt: r.finishedAt, aborted: null }));

/** checkLimits: no tenant over its limit at any moment; at some moment most tenants running together. */
function checkLimits(ran: Ran[], limit: number): void {
  expect(ran).toHaveLength(TENANTS * PER_TENANT);
  const tenants = [...new Set(ran.map((r) => r.tenant))];
  expect(tenants).toHaveLength(TENANTS);
  for (const t of tenants) expect(maxOverlap(spans(ran.filter((r) => r.tenant === t))), t).toBeLessThanOrEqual(limit);
  // All tenants make progress at once: at the busiest moment, jobs of at least half the tenants ran side by side.
  let most = 0;
  for (const r of ran) most = Math.max(most, new Set(ran.filter((o) => o.startedAt <= r.startedAt && r.startedAt < o.finishedAt).map((o) => o.tenant)).size);
  expect(most).toBeGreaterThanOrEqual(TENANTS / 2);
  expect(maxOverlap(spans(ran))).toBeGreaterThan(limit);
}

async function enqueueAll(list: { type: string; payload: object; scope: object }[]): Promise<string[]> {
  const r = await api("POST", "/v1/jobs/batch", { jobs: list });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.results.map((x: { id: string }) => x.id);
}

describe("a keyed concurrency limit", () => {
  it("pushed: 10 tenants × 20 jobs, at most 2 of a tenant at once, the tenants side by side", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const ids = await enqueueAll(jobs("demo.tenant", run, 25));
    const ran: Ran[] = [];
    for (const id of ids) {
      const done = await waitForJob(id, isTerminal, 60_000);
      expect(done.state, JSON.stringify(done)).toBe("completed");
      expect(done.concurrencyKey).toBe(done.payload.tenant);
      ran.push({ tenant: done.payload.tenant, startedAt: done.result.startedAt, finishedAt: done.result.finishedAt });
    }
    checkLimits(ran, 2);
  }, 90_000);

  it("pulled: the same with pull workers, at most 2 of a tenant at once", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const ran: Ran[] = [];
    const handlers = {
      "pull.tenant": async (p: { tenant: string; ms: number }, _ctx: JobContext) => {
        const startedAt = Date.now();
        await new Promise((r) => setTimeout(r, p.ms));
        ran.push({ tenant: p.tenant, startedAt, finishedAt: Date.now() });
        return {};
      },
    };
    const workers = Array.from({ length: 3 }, () => createWorker({ url: "http://queue.test", token: TOKEN, types: ["pull.tenant"], concurrency: 10, waitMs: 1_000, handlers, fetch: fetchCoordinator, log: () => {} }));
    const ids = await enqueueAll(jobs("pull.tenant", run, 25));
    await flushJobs(...ids);
    const running = workers.map((w) => w.start());
    for (const id of ids) expect((await waitForJob(id, isTerminal, 60_000)).state).toBe("completed");
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(running);
    checkLimits(ran, 2);
  }, 90_000);

  it("a keyed rate (demo.tenant.rated: 5 per second per tenant): no tenant starts a sixth job within a second, and tenants do not wait for each other", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const list = Array.from({ length: 16 }, (_, i) => ({ type: "demo.tenant.rated", payload: { tenant: `${run}-${i % 2}` }, scope: { type: "Keyed", id: `${run}-s${i % 3}` } }));
    const ids = await enqueueAll(list);
    const starts = new Map<string, number[]>();
    for (const id of ids) {
      const done = await waitForJob(id, isTerminal, 30_000);
      expect(done.state).toBe("completed");
      starts.set(done.payload.tenant, [...(starts.get(done.payload.tenant) ?? []), done.result.startedAt]);
    }
    for (const [, s] of starts) {
      s.sort((a, b) => a - b);
      expect(s).toHaveLength(8);
      // Spaced by the pool (200 ms apart): six starts span a second, less what the handler calls' latency moves.
      for (let i = 5; i < s.length; i++) expect(s[i]! - s[i - 5]!).toBeGreaterThanOrEqual(900);
    }
    const [a, b] = [...starts.values()];
    expect(Math.max(a![0]!, b![0]!)).toBeLessThan(Math.min(a![2]!, b![2]!));
  }, 60_000);

  it("GET /v1/pools lists the busiest key values of a keyed limit; PUT with a key sets that value's limit alone", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const [a, b] = [`${run}-a`, `${run}-b`];
    const ids = await enqueueAll([
      ...Array.from({ length: 6 }, () => ({ type: "demo.tenant", payload: { tenant: a, ms: 400 }, scope: { type: "Keyed", id: run } })),
      ...Array.from({ length: 2 }, () => ({ type: "demo.tenant", payload: { tenant: b, ms: 400 }, scope: { type: "Keyed", id: run } })),
    ]);
    const pool = async () => (await api("GET", "/v1/pools")).body.pools.find((p: { name: string }) => p.name === "type:demo.tenant");
    const listed = await vi.waitFor(async () => {
      const p = await pool();
      expect(p.keyed.busiest.keys.filter((k: { key: string }) => k.key === a || k.key === b)).toHaveLength(2);
      return p;
    });
    expect(listed).toMatchObject({ types: ["demo.tenant"], configured: { concurrency: null }, keyed: { path: "payload.tenant", configured: { concurrency: 2, rate: null } } });
    expect(listed.keyed.busiest.keys.find((k: { key: string }) => k.key === a)).toMatchObject({ active: 2 });
    const page = (await api("GET", "/v1/pools/type:demo.tenant/keys?limit=1")).body;
    expect(page.keys).toHaveLength(1);
    expect(page.total.keys).toBeGreaterThanOrEqual(2);
    expect((await api("GET", `/v1/pools/type:demo.tenant/keys?limit=1&cursor=${encodeURIComponent(page.next)}`)).body.keys[0].key).not.toBe(page.keys[0].key);

    // Tenant a gets 4 at once from now on; b keeps 2.
    const up = await api("PUT", "/v1/pools/type:demo.tenant", { key: a, concurrency: 4 });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body).toMatchObject({ name: `type:demo.tenant#${a}`, configured: { concurrency: 2 }, limits: { concurrency: 4 } });
    const ran: Ran[] = [];
    for (const id of ids) {
      const done = await waitForJob(id, isTerminal, 30_000);
      ran.push({ tenant: done.payload.tenant, startedAt: done.result.startedAt, finishedAt: done.result.finishedAt });
    }
    expect(maxOverlap(spans(ran.filter((r) => r.tenant === a)))).toBeGreaterThan(2);
    expect(maxOverlap(spans(ran.filter((r) => r.tenant === a)))).toBeLessThanOrEqual(4);
    expect(maxOverlap(spans(ran.filter((r) => r.tenant === b)))).toBeLessThanOrEqual(2);
    // Refusals name the field; a pool that is not keyed has no key values.
    expect((await api("PUT", "/v1/pools/type:demo.tenant", { concurrency: 3 })).body.error.details[0].path).toBe("key");
    expect((await api("PUT", "/v1/pools/demo-pool", { key: a, concurrency: 3 })).body.error.details[0].path).toBe("key");
    expect((await api("GET", "/v1/pools/demo-pool/keys")).status).toBe(404);
    expect((await api("GET", "/v1/pools/type:demo.tenant/keys?cursor=nope")).body.error.details[0].path).toBe("cursor");
    // Back to the config's limit; once idle, a value's row leaves the listing.
    expect((await api("PUT", "/v1/pools/type:demo.tenant", { key: a, concurrency: null })).body.limits.concurrency).toBe(2);
    await vi.waitFor(async () => expect((await pool()).keyed.busiest.keys.filter((k: { key: string }) => k.key === a || k.key === b)).toEqual([]), { timeout: 5_000 });
  }, 60_000);

  it("refuses a job whose payload lacks the key, naming the path; a concurrencyKey counts the job under its own key", async () => {
    const missing = await api("POST", "/v1/jobs", { type: "demo.tenant", payload: { ms: 1 } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "invalid_request", details: [expect.objectContaining({ path: "payload.tenant" })] });
    const inBatch = await api("POST", "/v1/jobs/batch", { jobs: [{ type: "demo.tenant", payload: { tenant: "a" } }, { type: "demo.tenant", payload: { tenant: { nested: 1 } } }] });
    expect(inBatch.status).toBe(400);
    expect(inBatch.body.error.details[0].path).toBe("jobs[1].payload.tenant");
    const own = await api("POST", "/v1/jobs", { type: "demo.tenant", payload: {}, concurrencyKey: "vip" });
    expect(own.status).toBe(201);
    expect(own.body.job.concurrencyKey).toBe("vip");
    await waitForJob(own.body.job.id, isTerminal);
    // A schedule whose every fire would lack the key is refused when it is put, not at each fire.
    const schedule = await api("PUT", `/v1/schedules/keyless-${crypto.randomUUID().slice(0, 8)}`, { type: "demo.tenant", everyMs: 60_000, payload: {} });
    expect(schedule.status).toBe(400);
    expect(schedule.body.error.details[0].path).toBe("payload.tenant");
    const stray = await api("POST", "/v1/jobs", { type: "demo.echo", payload: {}, concurrencyKey: "x" });
    expect(stray.status).toBe(400);
    expect(stray.body.error.details[0].path).toBe("concurrencyKey");
  });
});
