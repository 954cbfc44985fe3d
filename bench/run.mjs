#!/usr/bin/env node
/**
 * `npm run bench [-- --quick]`: the queue core's figures, each a ratio or a
 * rate measured in this one run against the real coordinator on local
 * workerd (wrangler dev), written to bench/results/latest.json.
 *
 * - enqueueVsBareInsert: single-job enqueue rate (HTTP → coordinator → scope
 *   object) ÷ the rate of a bare Durable Object doing one SQLite INSERT per
 *   RPC (HTTP → Worker → object), same client, same concurrency, runs
 *   alternated. Target ≥ 0.7.
 * - batchEnqueuePerSec: jobs/s enqueued in 1,000-job batches into one object.
 *   Target ≥ 20,000.
 * - claimDepthRatio: time of one pull claim + complete at queue depth
 *   ~100,000 ÷ at depth ~1,000 (same object kind, alternated rounds).
 *   Target ≤ 1.5.
 * - pullJobsPerSec (extra): 16 pull workers claiming 1 job at a time and
 *   completing it, jobs spread over 64 scopes — every claim passes through
 *   the catalog, so this is the catalog-bound ceiling of pull claiming.
 * - pushJobsPerSec: 5,000 jobs pushed to the example handler's no-op type
 *   (from one object), enqueue of the first to completion of the last; and
 *   pushVsPullDrain: that rate ÷ 16 pull workers draining 5,000 jobs of one
 *   object, one claim + complete at a time.
 * - pushPickupP50Ms / P95: enqueue → handler start for single jobs on an idle
 *   queue (the handler reports its start time). Target ≤ 10 ms.
 * - delayedLatenessP50Ms / P95: handler start − runAt for jobs delayed by 1 s.
 *   Target ≤ 50 ms.
 * - poolGuardedVsUnguarded: push throughput of a pool member (demo.pooled.a,
 *   its pool resized at runtime so it never blocks) ÷ the same handler with no
 *   guard (demo.ingest): the cost of taking and releasing permits.
 * - poolPermitsPerSec / poolPermitsPerSecBatched: one PoolDO alone (the
 *   queue's class, bench/pool/), acquire + release round trips with 1 and 10
 *   permits each, 16 in flight: the ceiling of one pool.
 * - scheduleLatenessP50Ms / P95: a schedule firing every second: each fired
 *   job's createdAt − the slot it was fired for.
 * - eventFanoutPerSec: events/s emitted to a topic with 3 consumers (each
 *   event becomes 3 delivery jobs), 16 in flight.
 * - throughputByDepth / throughputByScopes, drawn in bench/results/throughput.svg:
 *   16 pull workers on one object at growing depths; pushed no-op jobs spread
 *   over a growing number of scopes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chartSvg } from "./chart.mjs";
import { depthSweep, scopeSweep } from "./sweeps.mjs";
import { call, handlerConnected, listAll, machine, median, percentile, rate, round, startWorker, TOKEN, until } from "./lib.mjs";

const quick = process.argv.includes("--quick");
const P = quick
  ? { runs: 3, singles: 1500, batches: 12, cycleRounds: 2, cycles: 100, pushJobs: 5000, pickups: 100, delayed: 100 }
  : { runs: 5, singles: 4000, batches: 40, cycleRounds: 4, cycles: 150, pushJobs: 5000, pickups: 300, delayed: 300 };
const CONCURRENCY = 16;

const state = mkdtempSync(path.join(os.tmpdir(), "edgequeue-bench-"));
const log = (...a) => console.log(...a);


async function main() {
  log(`edgequeue bench (${quick ? "quick" : "full"}) — state in ${state}`);
  const queue = await startWorker({
    config: ["wrangler.toml", "examples/handler/wrangler.toml"],
    port: 8797,
    persistTo: path.join(state, "queue"),
    vars: { QUEUE_TOKEN: TOKEN },
  });
  const bare = await startWorker({ config: "bench/bare/wrangler.toml", port: 8798, persistTo: path.join(state, "bare") });
  const poolAlone = await startWorker({ config: "bench/pool/wrangler.toml", port: 8796, persistTo: path.join(state, "pool") });
  try {
    await handlerConnected(queue.url);
    // ------------------------------------------------ single enqueue vs bare insert
    const single = (type) => (i) => call(queue.url, "POST", "/v1/jobs", { type, payload: { i, to: "someone@example.com" } });
    const insert = (i) => call(bare.url, "POST", "/", { type: "bench.bare", payload: { i, to: "someone@example.com" } });
    await rate(300, CONCURRENCY, single("bench.warmup"));
    await rate(300, CONCURRENCY, insert);
    const enq = [];
    const ins = [];
    for (let r = 0; r < P.runs; r++) {
      ins.push(await rate(P.singles, CONCURRENCY, insert));
      enq.push(await rate(P.singles, CONCURRENCY, single("bench.single")));
      log(`  run ${r + 1}: enqueue ${enq.at(-1).toFixed(0)}/s, bare insert ${ins.at(-1).toFixed(0)}/s`);
    }
    const enqueueVsBareInsert = median(enq) / median(ins);

    // ------------------------------------------------ batch enqueue
    const batch = (type, size) => (b) =>
      call(queue.url, "POST", "/v1/jobs/batch", { jobs: Array.from({ length: size }, (_, i) => ({ type, payload: { b, i, to: "someone@example.com" } })) });
    await rate(2, 2, batch("bench.batch.warmup", 1000));
    const batchRates = [];
    for (let r = 0; r < 3; r++) batchRates.push((await rate(P.batches / 3, 2, batch("bench.batch", 1000))) * 1000);
    const batchEnqueuePerSec = median(batchRates);
    log(`  batch enqueue: ${batchRates.map((x) => x.toFixed(0)).join(", ")} jobs/s`);

    // ------------------------------------------------ claim + complete at depth 1k vs 100k
    const drained = P.cycleRounds * P.cycles;
    const shallow = { type: "bench.depth.1k", depth: 1000 + drained };
    const deep = { type: "bench.depth.100k", depth: 100_000 + drained };
    for (const q of [shallow, deep]) await rate(q.depth / 1000, 2, batch(q.type, 1000));
    const cycle = (type) => async () => {
      const { jobs } = await call(queue.url, "POST", "/v1/claim", { worker: "bench", types: [type] });
      if (jobs.length !== 1) throw new Error(`claim on ${type} returned ${jobs.length} jobs`);
      await call(queue.url, "POST", `/v1/jobs/${jobs[0].id}/complete`, { leaseToken: jobs[0].leaseToken });
    };
    await rate(20, 1, cycle(shallow.type));
    await rate(20, 1, cycle(deep.type));
    const msShallow = [];
    const msDeep = [];
    for (let r = 0; r < P.cycleRounds; r++) {
      msShallow.push(1000 / (await rate(P.cycles, 1, cycle(shallow.type))));
      msDeep.push(1000 / (await rate(P.cycles, 1, cycle(deep.type))));
    }
    const claimDepthRatio = median(msDeep) / median(msShallow);
    log(`  claim+complete: ${median(msShallow).toFixed(2)} ms at ~1k, ${median(msDeep).toFixed(2)} ms at ~100k`);

    // ------------------------------------------------ pull throughput across scopes (catalog-bound)
    const pullType = "bench.pull";
    const pullJobs = quick ? 1500 : 4000;
    const scopes = 64;
    await rate(scopes, 4, (s) =>
      call(queue.url, "POST", "/v1/jobs/batch", {
        jobs: Array.from({ length: Math.ceil(pullJobs / scopes) }, (_, i) => ({ type: pullType, scope: { type: "Tenant", id: `t${s}` }, payload: { i } })),
      }),
    );
    await new Promise((r) => setTimeout(r, 1500)); // let the scopes' first summaries reach the catalog
    let pulled = 0;
    const pullRate = await rate(pullJobs, CONCURRENCY, async () => {
      const { jobs } = await call(queue.url, "POST", "/v1/claim", { worker: "bench", types: [pullType] });
      for (const j of jobs) {
        await call(queue.url, "POST", `/v1/jobs/${j.id}/complete`, { leaseToken: j.leaseToken });
        pulled++;
      }
    });
    const pullJobsPerSec = (pullRate * pulled) / pullJobs;
    log(`  pull: ${pullJobsPerSec.toFixed(0)} jobs/s (${pulled} of ${pullJobs} claims returned a job)`);

    // ------------------------------------------------ push: throughput, pickup, delayed lateness
    const pushStart = Date.now();
    await rate(P.pushJobs / 1000, 1, batch("demo.noop", 1000));
    await until("push drain", async () => {
      const s = await call(queue.url, "GET", "/v1/stats?type=demo.noop");
      return s.completed >= P.pushJobs && s.pending + s.running + s.scheduled === 0;
    });
    const pushed = await listAll(queue.url, { type: "demo.noop", state: "completed" });
    const lastFinish = Math.max(...pushed.map((j) => j.finishedAt));
    const pushJobsPerSec = pushed.length / ((lastFinish - pushStart) / 1000);
    log(`  push: ${pushJobsPerSec.toFixed(0)} jobs/s (${pushed.length} jobs)`);

    const drainType = "bench.drain";
    await rate(P.pushJobs / 1000, 1, batch(drainType, 1000));
    const drainRate = await rate(P.pushJobs, CONCURRENCY, async () => {
      const { jobs } = await call(queue.url, "POST", "/v1/claim", { worker: "bench", types: [drainType] });
      for (const j of jobs) await call(queue.url, "POST", `/v1/jobs/${j.id}/complete`, { leaseToken: j.leaseToken });
    });
    log(`  pull drain (16 workers, one object): ${drainRate.toFixed(0)} jobs/s`);

    const pickups = [];
    for (let i = 0; i < P.pickups; i++) {
      const { job } = await call(queue.url, "POST", "/v1/jobs", { type: "demo.noop", payload: { i }, scope: { type: "Bench", id: `pickup-${i % 8}` } });
      const done = await until("pickup", async () => {
        const j = (await call(queue.url, "GET", `/v1/jobs/${job.id}`)).job;
        return j.state === "completed" ? j : null;
      });
      pickups.push(done.result.startedAt - done.createdAt);
    }
    log(`  push pickup: p50 ${percentile(pickups, 50)} ms, p95 ${percentile(pickups, 95)} ms`);

    const delayedIds = [];
    for (let i = 0; i < P.delayed; i++) {
      const { job } = await call(queue.url, "POST", "/v1/jobs", { type: "demo.noop", payload: { i }, delayMs: 1000, scope: { type: "Bench", id: `delay-${i % 8}` } });
      delayedIds.push(job.id);
      await new Promise((r) => setTimeout(r, 7)); // spread the due times over the second
    }
    const lateness = [];
    for (const id of delayedIds) {
      const done = await until("delayed job", async () => {
        const j = (await call(queue.url, "GET", `/v1/jobs/${id}`)).job;
        return j.state === "completed" ? j : null;
      });
      lateness.push(done.result.startedAt - done.runAt);
    }
    log(`  1 s delayed jobs, lateness: p50 ${percentile(lateness, 50)} ms, p95 ${percentile(lateness, 95)} ms`);

    // ------------------------------------------------ pools: guarded vs unguarded, and one pool's ceiling
    await call(queue.url, "PUT", "/v1/pools/demo-pool", { concurrency: 100_000 });
    let pushRound = 0;
    const pushRun = async (type, n) => {
      const t0 = Date.now();
      const scopes = 8;
      const scopeType = `Guard${pushRound++}`;
      await rate(scopes, 4, (s) =>
        call(queue.url, "POST", "/v1/jobs/batch", {
          jobs: Array.from({ length: n / scopes }, () => ({ type, payload: { ms: 0 }, scope: { type: scopeType, id: `s${s}` } })),
        }),
      );
      await until(`${type} drain`, async () => {
        const s = await call(queue.url, "GET", `/v1/stats?type=${type}`);
        return s.pending + s.running + s.scheduled === 0;
      });
      let last = 0;
      await rate(scopes, 8, async (s) => {
        for (const j of await listAll(queue.url, { type, scopeType, scopeId: `s${s}` })) last = Math.max(last, j.finishedAt ?? 0);
      });
      return n / ((last - t0) / 1000);
    };
    // Alternated rounds, medians: one round each moves by ±20% on this machine.
    const guardN = quick ? 2000 : 4000;
    const unguardedRates = [];
    const guardedRates = [];
    for (let r = 0; r < (quick ? 2 : 3); r++) {
      unguardedRates.push(await pushRun("demo.ingest", guardN));
      guardedRates.push(await pushRun("demo.pooled.a", guardN));
    }
    const unguardedRate = median(unguardedRates);
    const guardedRate = median(guardedRates);
    log(`  pool-guarded push ${guardedRates.map(Math.round).join(", ")} jobs/s vs unguarded ${unguardedRates.map(Math.round).join(", ")} jobs/s (8 scopes)`);
    const poolRate = async (want) => {
      const n = quick ? 1500 : 4000;
      return (await rate(n, CONCURRENCY, () => fetch(`${poolAlone.url}/?want=${want}`).then((r) => r.json()))) * want;
    };
    await poolRate(1);
    const poolPermitsPerSec = await poolRate(1);
    const poolPermitsPerSecBatched = await poolRate(10);
    log(`  one PoolDO: ${poolPermitsPerSec.toFixed(0)} permits/s (1 per call), ${poolPermitsPerSecBatched.toFixed(0)} permits/s (10 per call)`);

    // ------------------------------------------------ schedules and events
    const scheduleName = `bench-${Date.now()}`;
    await call(queue.url, "PUT", `/v1/schedules/${scheduleName}`, { type: "demo.tick", everyMs: 1000 });
    const fires = quick ? 6 : 15;
    await new Promise((r) => setTimeout(r, (fires + 1.5) * 1000));
    await call(queue.url, "DELETE", `/v1/schedules/${scheduleName}`);
    const ticks = (await listAll(queue.url, { type: "demo.tick" })).filter((j) => j.id.includes(`schedule:${scheduleName}:`));
    const scheduleLateness = ticks.map((j) => j.createdAt - j.scheduledFor);
    log(`  schedule (every 1 s, ${ticks.length} fires): lateness p50 ${percentile(scheduleLateness, 50)} ms, p95 ${percentile(scheduleLateness, 95)} ms`);

    const events = quick ? 1000 : 3000;
    const eventFanoutPerSec = await rate(events, CONCURRENCY, (i) => call(queue.url, "POST", "/v1/topics/demo.fanout/events", { payload: { i } }));
    log(`  event fan-out (3 consumers): ${eventFanoutPerSec.toFixed(0)} events/s`);

    // ------------------------------------------------ sweeps for the chart
    const byDepth = await depthSweep(queue.url, quick ? [1000, 10_000, 30_000] : [1000, 10_000, 50_000, 100_000, 200_000], quick ? 320 : 800);
    log(`  pull throughput by depth: ${byDepth.map((p) => `${p.x}: ${p.y}/s`).join(", ")}`);
    const byScopes = await scopeSweep(queue.url, quick ? [1, 8, 64] : [1, 4, 16, 64, 256], quick ? 1024 : 4096);
    log(`  push throughput by scopes: ${byScopes.map((p) => `${p.x}: ${p.y}/s`).join(", ")}`);

    const result = {
      date: new Date().toISOString(),
      mode: quick ? "quick" : "full",
      machine: machine(),
      enqueueVsBareInsert: round(enqueueVsBareInsert),
      batchEnqueuePerSec: Math.round(batchEnqueuePerSec),
      claimDepthRatio: round(claimDepthRatio),
      pullJobsPerSec: Math.round(pullJobsPerSec),
      pushJobsPerSec: Math.round(pushJobsPerSec),
      pushVsPullDrain: round(pushJobsPerSec / drainRate),
      pushPickupP50Ms: percentile(pickups, 50),
      pushPickupP95Ms: percentile(pickups, 95),
      delayedLatenessP50Ms: percentile(lateness, 50),
      delayedLatenessP95Ms: percentile(lateness, 95),
      poolGuardedVsUnguarded: round(guardedRate / unguardedRate),
      poolPermitsPerSec: Math.round(poolPermitsPerSec),
      poolPermitsPerSecBatched: Math.round(poolPermitsPerSecBatched),
      scheduleLatenessP50Ms: percentile(scheduleLateness, 50),
      scheduleLatenessP95Ms: percentile(scheduleLateness, 95),
      eventFanoutPerSec: Math.round(eventFanoutPerSec),
      throughputByDepth: byDepth,
      throughputByScopes: byScopes,
      targets: {
        enqueueVsBareInsert: ">= 0.7",
        batchEnqueuePerSec: ">= 20000",
        claimDepthRatio: "<= 1.5",
        pushPickupP50Ms: "<= 10",
        delayedLatenessP95Ms: "<= 50",
      },
      details: {
        concurrency: CONCURRENCY,
        enqueuePerSec: enq.map((x) => Math.round(x)),
        bareInsertPerSec: ins.map((x) => Math.round(x)),
        batchJobsPerSec: batchRates.map((x) => Math.round(x)),
        claimCompleteMsAtDepth1k: msShallow.map((x) => round(x)),
        claimCompleteMsAtDepth100k: msDeep.map((x) => round(x)),
        pullDrainJobsPerSec: Math.round(drainRate),
        pushPickupMs: { min: Math.min(...pickups), max: Math.max(...pickups) },
        delayedLatenessMs: { min: Math.min(...lateness), max: Math.max(...lateness) },
        guardedPushJobsPerSec: guardedRates.map(Math.round),
        unguardedPushJobsPerSec: unguardedRates.map(Math.round),
        scheduleFires: ticks.length,
      },
    };
    mkdirSync("bench/results", { recursive: true });
    writeFileSync("bench/results/latest.json", `${JSON.stringify(result, null, 2)}\n`);
    const m = result.machine;
    writeFileSync(
      "bench/results/throughput.svg",
      chartSvg(
        [
          { title: "Pull throughput vs queue depth", xLabel: "jobs waiting in the object (log scale)", yLabel: "jobs/s (16 pull workers)", points: byDepth },
          { title: "Push throughput vs scopes", xLabel: "scopes the jobs are spread over (log scale)", yLabel: "jobs/s (pushed, no-op handler)", points: byScopes },
        ],
        `edgequeue ${result.mode} bench, ${result.date.slice(0, 10)} — ${m.cpu}, ${m.cores} cores, Node ${m.node}, wrangler ${m.wrangler}, local workerd`,
      ),
    );
    const { details: _details, targets: _targets, machine: _machine, ...figures } = result;
    log(JSON.stringify(figures));
    log("wrote bench/results/latest.json");
  } finally {
    await Promise.all([queue.stop(), bare.stop(), poolAlone.stop()]);
    rmSync(state, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
