/**
 * What a job costs on Cloudflare's price list, over its whole life and every
 * object (harness.ts): each workload of docs/design.md "What a job costs",
 * with a ceiling on rows written and requests per job. The counts come from
 * the objects' own meters, so they are exact for what ran; what can vary
 * between runs is how many catalog summaries a workload's objects send (at
 * most one a second each), hence a little room above the measured values.
 * `COST_REPORT=1` prints the table as JSON (bench/cost.mjs writes it to
 * bench/results/cost.json).
 */
import { keyedPoolName, typePoolName } from "../../src/pool/pool-name";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env as workersEnv } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { typeHome, scopeHome } from "../../src/job/home";
import { registryHome } from "../../src/job/event-tags";
import { loadConfig } from "../../src/config/load";
import type { ScheduleDO } from "../../src/schedule/schedule-do";
import type { ScopeDO } from "../../src/scope/scope-do";
import type { PoolDO } from "../../src/pool/pool-do";
import { ManualClock, systemClock } from "../../src/clock";
import { createWorker } from "../../src/pull-worker";
import { exports } from "cloudflare:workers";
import { api, TOKEN, uniqueScope, uniqueType } from "../helpers/api";
import { env, partsOf } from "../helpers/scope";
import { measure, settled, stoppedClock, touched, warm, type Cost } from "./harness";
import { catalogName } from "../../src/catalog/shards";

const N = 100;
/** The schedule object's clock for the whole file: stopped two days ahead (beforeAll), moved only by the cron workload. */
const scheduleClock = stoppedClock(2 * 86_400_000);
const results: Record<string, Cost & { per: string }> = {};
const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

async function post(path: string, body: unknown): Promise<any> {
  const res = await api("POST", path, body);
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A scope of its own per workload: one home, warmed before the count. */
async function scoped() {
  const scope = uniqueScope("cost");
  await warm([scopeHome(scope).name]);
  return scope;
}

/** N jobs enqueued one at a time, each run to its end before the next (so each goes alone, on any machine). */
async function singles(type: string, payload: (i: number) => Record<string, unknown>, more: (i: number) => Record<string, unknown> = () => ({})) {
  const scope = await scoped();
  const home = scopeHome(scope).name;
  return measure(
    N,
    async (clock) => {
      const ids: string[] = [];
      for (let i = 0; i < N; i++) {
        ids.push((await post("/v1/jobs", { type, payload: payload(i), scope, ...more(i) })).job.id);
        await settled([home], i + 1, clock);
      }
      return ids;
    },
    { homes: [home] },
  );
}

/**
 * Ceilings per job (per event for the event): rows written and requests, as counted with the clocks stopped
 * (harness.ts) on 2026-12-06 — the same on an idle and on a loaded machine to within a row or two per hundred jobs,
 * so a ceiling sits just above the count. Singles and cron fires go one at a time, each run to its end. The keyed
 * limit's count depends on when the pools' pokes land (how often a tenant is refused and asked again): its ceiling
 * keeps room for that.
 */
const CEILING: Record<string, { rowsWritten: number; requests: number }> = {
  "single enqueue, pushed": { rowsWritten: 3.5, requests: 1.1 },
  // Two rows more than without: the callback owed (the trigger's row) and its deletion once acknowledged.
  "single enqueue with a completion callback, pushed": { rowsWritten: 5.5, requests: 1.1 },
  "100-job batch, pushed": { rowsWritten: 3.5, requests: 0.1 },
  "single enqueue, keyed, pushed": { rowsWritten: 4.5, requests: 1.1 },
  "100-job batch, pulled by edgequeue/worker": { rowsWritten: 6.9, requests: 0.35 },
  // Each step one row — an update of the job's own row (scope/workflow/journal-row.ts) — over the single job's 3.3.
  "a job with 3 durable steps, pushed": { rowsWritten: 6.6, requests: 1.1 },
  // A held retry (docs/design.md "Held retries"): the failure and the restart write the row, its timeline entry in
  // the failure's update, its counts owed; the handler's log line rides in the completion's update.
  "a job that fails once then succeeds, pushed": { rowsWritten: 6.2, requests: 2.3 },
  // Each fire in a minute of its own, as a minutely schedule's are: the scope's and the catalog's per-minute rows, a
  // summary and the schedule object's usage report per fire (12.3 of the 25.6 rows are the catalog's) — the fixed
  // work of a quiet object (25.6 rows, 4.3 requests).
  "a cron fire, pushed": { rowsWritten: 26.2, requests: 4.6 },
  // The topic's registry decides each event's deliveries (one commit: docs/workflows.md "Waiting for an event").
  "an event to 3 consumers, pushed": { rowsWritten: 21.2, requests: 7.4 },
  "a child of a 100-child ctx.invoke fan-out, pushed": { rowsWritten: 14.0, requests: 0.3 },
  // 10.2–11.7 rows and 3.0–3.5 requests over runs, loaded and idle: a permit written and deleted with its expiry
  // index entry per job, the waiting line, the busy list, pokes.
  "100-job batch under a keyed limit (10 tenants, 2 each), pushed": { rowsWritten: 12.5, requests: 5.5 },
  // Per tenant: its scope object's tables and indexes made at once from the baseline (src/tables/migrate.ts: 74 rows,
  // where every migration since the first wrote 455), and its key's pool object's under a keyed limit — once per
  // tenant (a key's pool object sets up again after a minute idle).
  "a new tenant's objects set up (its scope object, its key's pool object)": { rowsWritten: 110, requests: 0.1 },
};

const workloads: [name: string, per: string, run: () => Promise<Cost>][] = [
  ["single enqueue, pushed", "job", () => singles("demo.noop", () => ({}))],
  [
    // A completion callback (docs/http-api.md "Completion callbacks") to the local receiver, which acknowledges it.
    "single enqueue with a completion callback, pushed",
    "job",
    async () => {
      const name = `cost-${crypto.randomUUID()}`;
      const receiver = (env as unknown as { RECEIVER_URL: string }).RECEIVER_URL;
      const scope = await scoped();
      const home = scopeHome(scope).name;
      const { vi } = await import("vitest");
      return measure(
        N,
        async (clock) => {
          const ids: string[] = [];
          for (let i = 0; i < N; i++) {
            ids.push((await post("/v1/jobs", { type: "demo.noop", payload: {}, scope, callback: { url: `${receiver}/cb/${name}` } })).job.id);
            await settled([home], i + 1, clock);
            await vi.waitFor(async () => expect(((await (await fetch(`${receiver}/cb/${name}`)).json()) as unknown[]).length).toBe(i + 1), { timeout: 20_000, interval: 10 });
          }
          return ids;
        },
        { homes: [home] },
      );
    },
  ],
  [
    "100-job batch, pushed",
    "job",
    async () => {
      const scope = await scoped();
      return measure(N, async () => (await post("/v1/jobs/batch", { jobs: Array.from({ length: N }, () => ({ type: "demo.noop", payload: {}, scope })) })).results.map((r: any) => r.id), {
        homes: [scopeHome(scope).name],
      });
    },
  ],
  ["single enqueue, keyed, pushed", "job", () => singles("demo.noop", () => ({}), (i) => ({ dedupeKey: `k${i}` }))],
  [
    "100-job batch, pulled by edgequeue/worker",
    "job",
    async () => {
      const scope = await scoped();
      const type = uniqueType("cost.pulled");
      // A claim also asks the type's own object (its unscoped jobs): warm, as in a queue that runs the type.
      await warm([typeHome(type, 0).name]);
      const homes = [scopeHome(scope).name, typeHome(type, 0).name];
      return measure(N, async () => {
        const ids = (await post("/v1/jobs/batch", { jobs: Array.from({ length: N }, () => ({ type, payload: {}, scope })) })).results.map((r: any) => r.id);
        const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], handlers: { [type]: async () => ({ ok: true }) }, fetch: fetchCoordinator, log: () => {}, concurrency: N });
        let done = 0;
        while (done < N) done += await w.runOnce();
        return ids;
      }, { homes });
    },
  ],
  ["a job with 3 durable steps, pushed", "job", () => singles("test.steps", () => ({ mode: "three" }))],
  ["a job that fails once then succeeds, pushed", "job", () => singles("demo.flaky", () => ({ failTimes: 1 }))],
  [
    "a cron fire, pushed",
    "job",
    async () => {
      const scope = await scoped();
      const home = scopeHome(scope).name;
      const name = `cost-${crypto.randomUUID().slice(0, 8)}`;
      const schedules = env.SCHEDULE.getByName("schedules");
      // The schedule object's own stopped clock (set before any count) is the workload's: its fires come when the
      // workload moves it, and no object's clock goes back.
      const clock = scheduleClock;
      // Again here: an instance the runtime started since beforeAll runs on the real clock.
      await runInDurableObject(schedules, (o: ScheduleDO) => void (o.clock = clock));
      const res = await api("PUT", `/v1/schedules/${name}`, { type: "demo.noop", everyMs: 60_000, scope, payload: {} });
      if (res.status >= 300) throw new Error(JSON.stringify(res.body));
      const fires = 20;
      const cost = await measure(
        fires,
        async () => {
          // One fire at a time, each job run to its end before the next fire (so each goes alone, on any machine).
          for (let k = 1; k <= fires; k++) {
            clock.advance(60_000);
            await runDurableObjectAlarm(schedules);
            await settled([home], k, clock);
          }
          const listed = await runInDurableObject(env.SCOPE.getByName(home), (_o, state) => state.storage.sql.exec<{ id: string }>("SELECT id FROM job").toArray());
          return listed.map((r) => r.id);
        },
        { homes: [home], clock },
      );
      await api("DELETE", `/v1/schedules/${name}`);
      return cost;
    },
  ],
  [
    "an event to 3 consumers, pushed",
    "event",
    async () => {
      const consumers = loadConfig(env).topics["demo.fanout"]!;
      // The topic's registry (its event waits: scope/workflow/event-waits.ts) is told of every event too.
      const homes = [...consumers.flatMap((t: string) => Array.from({ length: loadConfig(env).types[t]?.shards ?? 1 }, (_, k) => typeHome(t, k).name)), registryHome("demo.fanout")];
      await warm(homes);
      return measure(
        N,
        async () => {
          const ids: string[] = [];
          for (let i = 0; i < N; i++) ids.push(...(await post("/v1/topics/demo.fanout/events", { payload: { i } })).deliveries);
          return ids;
        },
        { homes },
      );
    },
  ],
  [
    // demo.tenant: at most 2 of each tenant at once, 10 tenants; each tenant's pool object warmed first (a busy
    // tenant's is; one idle a minute deletes its storage and makes its tables again on its next job).
    "100-job batch under a keyed limit (10 tenants, 2 each), pushed",
    "job",
    async () => {
      const scope = await scoped();
      const run = crypto.randomUUID().slice(0, 8);
      // And the limit's own object, which lists its busy tenants (pool/key-registry.ts).
      const pools = [typePoolName("demo.tenant"), ...Array.from({ length: 10 }, (_, t) => keyedPoolName(typePoolName("demo.tenant"), `${run}-${t}`))];
      for (const name of pools) await runInDurableObject(env.POOL.getByName(name), () => undefined);
      return measure(
        N,
        async () => (await post("/v1/jobs/batch", { jobs: Array.from({ length: N }, (_, i) => ({ type: "demo.tenant", payload: { tenant: `${run}-${i % 10}` }, scope })) })).results.map((r: any) => r.id),
        { homes: [scopeHome(scope).name], pools },
      );
    },
  ],
  [
    // demo.parent {n: 100, scoped}: children in the parent's scope object (a shared type home is not swept clean
    // while other tests' jobs live in it); the parent's share (its two attempts, journal, outbox) is counted over them.
    "a child of a 100-child ctx.invoke fan-out, pushed",
    "child",
    async () => {
      const scope = await scoped();
      return measure(N, async () => {
        const parent = (await post("/v1/jobs", { type: "demo.parent", payload: { n: N, scoped: true }, scope })).job.id as string;
        const { vi } = await import("vitest");
        await vi.waitFor(async () => expect((await api("GET", `/v1/jobs/${parent}`)).body.job.state).toBe("completed"), { timeout: 20_000, interval: 20 });
        const children = (await api("GET", `/v1/jobs/${parent}/children?limit=1000`)).body.children as { id: string }[];
        return [parent, ...children.map((c) => c.id)];
      }, { homes: [scopeHome(scope).name] });
    },
  ],
  // Last: its new pool objects' own later work (a usage report within 5 s, their idle minute) would fall in the next
  // workload's count.
  [
    "a new tenant's objects set up (its scope object, its key's pool object)",
    "tenant",
    async () => {
      const tenants = Array.from({ length: 10 }, () => crypto.randomUUID());
      return measure(
        tenants.length,
        async () => {
          for (const t of tenants) {
            await runInDurableObject(env.SCOPE.getByName(scopeHome({ type: "Tenant", id: `new-${t}` }).name), () => undefined);
            await runInDurableObject(env.POOL.getByName(keyedPoolName(typePoolName("demo.tenant"), t)), () => undefined);
          }
          return [];
        },
        { cold: true },
      );
    },
  ],
];

describe("what a job costs, over its whole life and every object", () => {
  // The coordinator's first request starts the schedule object (it syncs the config's schedules once): before the count.
  beforeAll(async () => {
    await api("GET", "/v1/stats");
    // The config's own schedules (demo.tick every 5 minutes) must not fire by the real clock into some workload's
    // count: the schedule object's clock stops two days ahead (the cron workload moves it on) and its catch-up fires
    // now.
    const schedules = env.SCHEDULE.getByName("schedules");
    await runInDurableObject(schedules, (o: ScheduleDO) => void (o.clock = scheduleClock));
    await runDurableObjectAlarm(schedules);
    // And it stays out of the cron workload's minutes: its next slot a year on.
    await runInDurableObject(schedules, (_o, state) => void state.storage.sql.exec("UPDATE schedule SET next_run_at = next_run_at + ? WHERE name = 'demo-every-5-minutes'", 365 * 86_400_000));
    // The catch-up's demo.tick job runs to its end and its object tells the catalog now, not in the first workload.
    const tick = typeHome("demo.tick", 0).name;
    await warm([tick]);
    await settled([tick], 0);
    await runInDurableObject(env.SCOPE.getByName(tick), (o: ScopeDO) => partsOf(o).report.reporter.flush());
  });

  it.each(workloads)("%s", async (name, per, run) => {
    const cost = await run();
    results[name] = { ...cost, per };
    expect(cost.rowsWritten, `${name}: rows written per ${per}`).toBeLessThanOrEqual(CEILING[name]!.rowsWritten);
    expect(cost.requests, `${name}: requests per ${per}`).toBeLessThanOrEqual(CEILING[name]!.requests);
  });

  it("idle: once every job is swept (and a key's pool object has deleted itself), no object keeps an alarm — 0 requests and 0 rows an hour", async () => {
    const alarms: string[] = [];
    const alarmOf = async (name: string, stub: DurableObjectStub) => {
      const at = await runInDurableObject(stub, (_o: unknown, state: DurableObjectState) => state.storage.getAlarm());
      if (at !== null) alarms.push(`${name} at ${new Date(at).toISOString()}`);
    };
    // A key value's pool object keeps one alarm past its last permit: a minute idle, it deletes its storage
    // (KEY_IDLE_KEEP_MS) and sets none. That one alarm fires here, on a clock past it.
    const later = new ManualClock(Date.now() + 2 * 3600_000);
    for (const pool of touched.pools) {
      const stub = env.POOL.getByName(pool);
      await runInDurableObject(stub, (o: PoolDO) => void (o.clock = later));
      await runDurableObjectAlarm(stub);
      await runInDurableObject(stub, (o: PoolDO) => void (o.clock = systemClock));
    }
    // What those last alarms used reaches the catalog shards, which write it once at their usage alarm.
    const shards = loadConfig(env).catalogShards;
    for (let k = 0; k < shards; k++) {
      const stub = env.CATALOG.getByName(catalogName(k));
      if (await runInDurableObject(stub, (_o: unknown, state: DurableObjectState) => state.storage.getAlarm())) await runDurableObjectAlarm(stub);
    }
    for (const home of touched.homes) await alarmOf(home, env.SCOPE.getByName(home));
    for (const pool of touched.pools) await alarmOf(pool, env.POOL.getByName(pool));
    for (let k = 0; k < shards; k++) await alarmOf(catalogName(k), env.CATALOG.getByName(catalogName(k)));
    expect(touched.homes.size).toBeGreaterThan(10);
    expect(alarms).toEqual([]);
  });

  it("a step costs at most 3 rows written more than a job without", () => {
    const step = (results["a job with 3 durable steps, pushed"]!.rowsWritten - results["single enqueue, pushed"]!.rowsWritten) / 3;
    expect(step).toBeLessThanOrEqual(3);
  });
});

afterAll(() => {
  if ((workersEnv as unknown as { COST_REPORT?: string }).COST_REPORT) console.log(`COST_JSON ${JSON.stringify(results)}`);
});

