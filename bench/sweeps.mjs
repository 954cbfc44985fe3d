// The benchmark's two sweeps, for the chart: pull throughput against queue depth (one
// object holding N waiting jobs), and push throughput against the number of scopes the
// same jobs are spread over (each scope is its own object, dispatching in parallel).
import { call, listAll, rate, until } from "./lib.mjs";

const CONCURRENCY = 16;

async function fill(url, type, n) {
  for (let i = 0; i < n; i += 1000) {
    await call(url, "POST", "/v1/jobs/batch", { jobs: Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ type, payload: { i: i + k } })) });
  }
}

/** depthSweep: 16 pull workers (claim + complete) on one object at each depth; jobs/s. */
export async function depthSweep(url, depths, cycles) {
  const points = [];
  for (const depth of depths) {
    const type = `bench.sweep.depth.${depth}`;
    await fill(url, type, depth + cycles);
    const perSec = await rate(cycles, CONCURRENCY, async () => {
      const { jobs } = await call(url, "POST", "/v1/claim", { worker: "sweep", types: [type] });
      for (const j of jobs) await call(url, "POST", `/v1/jobs/${j.id}/complete`, { leaseToken: j.leaseToken });
    });
    points.push({ x: depth, y: Math.round(perSec) });
  }
  return points;
}

/** scopeSweep: `jobs` demo.noop jobs spread over N scopes, pushed to the example handler; jobs/s from first enqueue to last finish. */
export async function scopeSweep(url, scopeCounts, jobs) {
  const points = [];
  for (const scopes of scopeCounts) {
    const scopeType = `Sweep${scopes}`;
    const before = (await call(url, "GET", "/v1/stats?type=demo.noop")).completed;
    const t0 = Date.now();
    const perScope = Math.ceil(jobs / scopes);
    // Scope by scope, at most 1,000 jobs per call (the batch limit).
    await rate(scopes, 4, async (s) => {
      for (let i = 0; i < perScope; i += 1000) {
        const jobs = Array.from({ length: Math.min(1000, perScope - i) }, () => ({ type: "demo.noop", payload: {}, scope: { type: scopeType, id: `s${s}` } }));
        await call(url, "POST", "/v1/jobs/batch", { jobs });
      }
    });
    await until(`push over ${scopes} scopes`, async () => {
      const s = await call(url, "GET", "/v1/stats?type=demo.noop");
      return s.completed >= before + perScope * scopes && s.pending + s.running + s.scheduled === 0;
    });
    let last = 0;
    await rate(scopes, 8, async (s) => {
      const done = await listAll(url, { type: "demo.noop", scopeType, scopeId: `s${s}` });
      for (const j of done) last = Math.max(last, j.finishedAt);
    });
    points.push({ x: scopes, y: Math.round((perScope * scopes) / ((last - t0) / 1000)) });
  }
  return points;
}
