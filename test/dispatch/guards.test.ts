/**
 * The guards, end to end with the shipped demo config (wrangler.toml) and the
 * example handler, whose guarded demo types return when they ran. Randomized
 * runs (seeded), then the recorded spans are checked.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { TypeBackoff } from "../../src/dispatch/backoff";
import { homeOfJobId } from "../../src/job/home";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, flushJobs, isTerminal, waitForJob } from "../helpers/api";
import { maxOverlap, probe, type Span } from "../helpers/probe";
import { int, pick, seeded } from "../helpers/random";
import { env, partsOf } from "../helpers/scope";

interface Ran {
  id: string;
  type: string;
  scope: string;
  startedAt: number;
  finishedAt: number;
  claimedAt: number;
}

async function runAll(jobs: { type: string; scope: string; ms: number }[], timeoutMs = 30_000): Promise<Ran[]> {
  const r = await api("POST", "/v1/jobs/batch", { jobs: jobs.map((j) => ({ type: j.type, payload: { ms: j.ms }, scope: { type: "Tenant", id: j.scope } })) });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const out: Ran[] = [];
  for (const res of r.body.results) {
    const done = await waitForJob(res.id, isTerminal, timeoutMs);
    expect(done.state, JSON.stringify(done)).toBe("completed");
    out.push({ id: done.id, type: done.type, scope: done.scope.id, startedAt: done.result.startedAt, finishedAt: done.result.finishedAt, claimedAt: done.startedAt });
  }
  return out;
}

const spans = (ran: Ran[]): Span[] => ran.map((r) => ({ id: r.id, key: "", startedAt: r.startedAt, finishedAt: r.finishedAt, aborted: null }));

function overlaps(a: Ran, b: Ran): boolean {
  return a.startedAt < b.finishedAt && b.startedAt < a.finishedAt;
}

describe("guards hold across objects (randomized, seeded)", () => {
  it("serializeByScope: no two demo.serial jobs of one scope overlap, while scopes run in parallel", async () => {
    const rand = seeded(11);
    const scopes = ["s1", "s2", "s3"].map((s) => `${s}-${crypto.randomUUID()}`);
    const ran = await runAll(Array.from({ length: 18 }, () => ({ type: "demo.serial", scope: pick(rand, scopes)!, ms: int(rand, 15, 40) })));
    for (const s of scopes) expect(maxOverlap(spans(ran.filter((r) => r.scope === s)))).toBeLessThanOrEqual(1);
    expect(maxOverlap(spans(ran))).toBeGreaterThanOrEqual(2);
  });

  it("a pool's maximum overlap equals its concurrency (demo-pool: a and b share 2)", async () => {
    const rand = seeded(12);
    const key = crypto.randomUUID();
    const ran = await runAll(
      Array.from({ length: 30 }, () => ({ type: rand() < 0.5 ? "demo.pooled.a" : "demo.pooled.b", scope: `${key}-${int(rand, 0, 5)}`, ms: int(rand, 20, 40) })),
    );
    expect(maxOverlap(spans(ran))).toBe(2);
  });

  it("a type's concurrency of 1 runs one at a time across scopes", async () => {
    const key = crypto.randomUUID();
    const ran = await runAll(Array.from({ length: 8 }, (_, i) => ({ type: "demo.single", scope: `${key}-${i % 4}`, ms: 15 })));
    expect(maxOverlap(spans(ran))).toBe(1);
  });

  it("notWhileRunning pairs never overlap (but each side may overlap itself)", async () => {
    const rand = seeded(13);
    const key = crypto.randomUUID();
    const ran = await runAll(
      Array.from({ length: 24 }, () => ({ type: rand() < 0.5 ? "demo.import" : "demo.hydrate", scope: `${key}-${int(rand, 0, 5)}`, ms: int(rand, 10, 30) })),
    );
    const imports = ran.filter((r) => r.type === "demo.import");
    const hydrates = ran.filter((r) => r.type === "demo.hydrate");
    for (const a of imports) for (const b of hydrates) expect(overlaps(a, b), `${a.id} overlaps ${b.id}`).toBe(false);
  }, 60_000);

  it("waitsFor: demo.rollup does not start while demo.ingest has due or running work", async () => {
    const key = crypto.randomUUID();
    const r = await api("POST", "/v1/jobs/batch", {
      jobs: Array.from({ length: 8 }, (_, i) => ({ type: "demo.ingest", payload: { ms: 40 }, scope: { type: "Tenant", id: `${key}-${i % 4}` } })),
    });
    const ingestIds: string[] = r.body.results.map((x: any) => x.id);
    await flushJobs(...ingestIds); // the catalog knows the backlog before the rollup asks
    const rollup = (await api("POST", "/v1/jobs", { type: "demo.rollup", payload: { ms: 1 }, scope: { type: "Tenant", id: `${key}-r` } })).body.job;
    const ingests = await Promise.all(ingestIds.map((id) => waitForJob(id, isTerminal)));
    const done = await waitForJob(rollup.id, isTerminal, 15_000);
    const lastIngest = Math.max(...ingests.map((j) => j.result.finishedAt));
    expect(done.result.startedAt).toBeGreaterThanOrEqual(lastIngest);
  }, 30_000);

  it("fairness: a one-job tenant starts within the first few dispatches behind a 1,000-job tenant", async () => {
    const big = `big-${crypto.randomUUID()}`;
    const small = `small-${crypto.randomUUID()}`;
    await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 1000 }, () => ({ type: "demo.fair", payload: { ms: 5 }, scope: { type: "Tenant", id: big } })) });
    const one = (await api("POST", "/v1/jobs", { type: "demo.fair", payload: { ms: 5 }, scope: { type: "Tenant", id: small } })).body.job;
    const done = await waitForJob(one.id, isTerminal, 20_000);
    await api("POST", `/v1/scopes/Tenant/${big}/cancel`, {});
    const page = await api("GET", `/v1/jobs?scopeType=Tenant&scopeId=${big}&limit=500`);
    const page2 = page.body.nextCursor ? await api("GET", `/v1/jobs?scopeType=Tenant&scopeId=${big}&limit=500&cursor=${page.body.nextCursor}`) : { body: { items: [] } };
    const bigStartedBefore = [...page.body.items, ...page2.body.items].filter((j: any) => j.startedAt !== null && j.startedAt <= done.startedAt).length;
    expect(bigStartedBefore).toBeLessThanOrEqual(6);
  }, 60_000);

  it("a rate pool admits its budget and holds the rest pending (demo-rate: 30 per minute)", async () => {
    const key = crypto.randomUUID();
    const r = await api("POST", "/v1/jobs/batch", {
      jobs: Array.from({ length: 40 }, (_, i) => ({ type: "demo.rated", payload: { ms: 1 }, scope: { type: "Tenant", id: `${key}-${i % 4}` } })),
    });
    const ids: string[] = r.body.results.map((x: any) => x.id);
    const states = await vi.waitFor(
      async () => {
        const s = await Promise.all(ids.map(async (id) => (await api("GET", `/v1/jobs/${id}`)).body.job.state));
        if (s.filter((x) => x === "completed").length < 30) throw new Error("not yet");
        return s;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(states.filter((x) => x === "completed")).toHaveLength(30);
    expect(states.filter((x) => x === "pending")).toHaveLength(10);
    const pools = (await api("GET", "/v1/pools")).body.pools;
    const rate = pools.find((p: any) => p.name === "demo-rate");
    expect(rate).toMatchObject({ limits: { ratePerMinute: 30 }, window: { spent: 30 } });
    expect(rate.waiting.length).toBeGreaterThan(0);
    for (const id of ids) await api("POST", `/v1/jobs/${id}/cancel`);
  }, 30_000);

  it("a killed permit holder frees its slot when its permit lapses", async () => {
    const key = crypto.randomUUID();
    const a = (await api("POST", "/v1/jobs", { type: "test.single.short", payload: { ms: 60_000, key }, scope: { type: "Tenant", id: `${key}-a` } })).body.job;
    await waitForJob(a.id, (j) => j.state === "running");
    await abortAllDurableObjects(); // the holder dies: nothing renews its lease or its permit
    const b = (await api("POST", "/v1/jobs", { type: "test.single.short", payload: { ms: 1, key }, scope: { type: "Tenant", id: `${key}-b` } })).body.job;
    const done = await waitForJob(b.id, isTerminal, 15_000);
    expect(done.state).toBe("completed");
    await api("POST", `/v1/jobs/${a.id}/cancel`);
  }, 30_000);
});

describe("serializeByScope and a handler that does not stop", () => {
  it("the scope's next job waits for the timed-out call to return, not just for its lease", async () => {
    const key = crypto.randomUUID();
    const scope = { type: "Tenant", id: key };
    const a = (await api("POST", "/v1/jobs", { type: "test.serial.deaf", payload: { ms: 2_000, key }, scope })).body.job;
    await waitForJob(a.id, (j) => j.state === "running");
    const b = (await api("POST", "/v1/jobs", { type: "test.serial.deaf", payload: { ms: 1, key }, scope })).body.job;
    expect(await waitForJob(a.id, isTerminal, 10_000)).toMatchObject({ state: "failed", failureKind: "timeout" });
    await waitForJob(b.id, isTerminal, 10_000);
    const ran = await probe.spans(key);
    const spanA = ran.find((s) => s.id === a.id)!;
    const spanB = ran.find((s) => s.id === b.id)!;
    expect(spanB.startedAt).toBeGreaterThanOrEqual(spanA.finishedAt);
  }, 20_000);
});

describe("pools at runtime", () => {
  it("GET /v1/pools lists every pool; PUT resizes one, persisted, and null returns to the config", async () => {
    const list = (await api("GET", "/v1/pools")).body.pools.map((p: any) => p.name);
    expect(list).toEqual(expect.arrayContaining(["demo-pool", "demo-rate", "type:demo.single", "type:demo.fair"]));
    const up = await api("PUT", "/v1/pools/demo-pool", { concurrency: 3 });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ name: "demo-pool", configured: { concurrency: 2 }, limits: { concurrency: 3 } });
    const back = await api("PUT", "/v1/pools/demo-pool", { concurrency: null });
    expect(back.body.limits.concurrency).toBe(2);
    expect((await api("PUT", "/v1/pools/nope", { concurrency: 1 })).status).toBe(404);
    const bad = await api("PUT", "/v1/pools/demo-pool", { ratePerMinute: 10 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("ratePerMinute");
    expect((await api("PUT", "/v1/pools/demo-pool", {})).status).toBe(400);
    expect((await api("PUT", "/v1/pools/demo-pool", { concurrency: 0 })).status).toBe(400);
  });
});

describe("starvation", () => {
  it("a type blocked many times in a row is backed off and logs a warning naming what blocks it", async () => {
    const job = (await api("POST", "/v1/jobs", { type: "demo.echo", payload: {}, scope: { type: "Tenant", id: crypto.randomUUID() } })).body.job;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const why = "the concurrency of demo.single is full";
      const { before, after, until } = await runInDurableObject(env.SCOPE.getByName(homeOfJobId(job.id)!.name), (o: ScopeDO) => {
        // The dispatcher's refusal path (dispatch/batch-take.ts), with the epoch its take passes: without it the
        // refusal counts as one asked before an unblock, and the type is never backed off.
        const d = (partsOf(o).push as unknown as { dispatcher: { backoff: TypeBackoff } }).dispatcher;
        const before = o.clock.now();
        for (let i = 0; i < 20; i++) d.backoff.blocked("demo.single", 30_000, why, d.backoff.epoch);
        return { before, after: o.clock.now(), until: d.backoff.blockedUntil("demo.single") };
      });
      expect(until).toBeGreaterThanOrEqual(before + 30_000);
      expect(until).toBeLessThanOrEqual(after + 30_000);
      const lines = warn.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("job:starving"));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ type: "demo.single", blockedTimes: 20, blockedBy: why });
    } finally {
      warn.mockRestore();
    }
  });
});
