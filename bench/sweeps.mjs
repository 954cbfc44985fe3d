// The benchmark's two sweeps, for the chart: pull throughput against queue depth (one
// object holding N waiting jobs), and push throughput against the number of scopes the
// same jobs are spread over (each scope is its own object, dispatching in parallel).
import { fill, median, pullStep, pushDrain, rate } from "./lib.mjs";

/** depthSweep: 16 pull workers (claim + complete) on one object at each depth; jobs/s. */
export async function depthSweep(url, depths, cycles) {
  const points = [];
  for (const depth of depths) {
    const type = `bench.sweep.depth.${depth}`;
    await fill(url, depth + cycles, (i) => ({ type, payload: { i } }), 2);
    const perSec = await rate(cycles, 16, () => pullStep(url, type));
    points.push({ x: depth, y: Math.round(perSec) });
  }
  return points;
}

/**
 * scopeSweep: `jobs` demo.noop jobs spread over N scopes (each scope's jobs enqueued in batches of its own, as
 * tenants enqueue), pushed to the example handler; jobs/s from first enqueue to last finish. Each count's objects
 * are made once before they are timed (a warm-up of a few jobs each): what is measured is how the queue runs with
 * N busy tenants, not what creating N objects costs. The counts are run in turn, `rounds` times over, and each
 * point is its median: one drain alone moved the 64 ÷ 1 ratio by ±0.1 between runs.
 */
export async function scopeSweep(url, scopeCounts, jobs, rounds = 1) {
  const rates = new Map(scopeCounts.map((scopes) => [scopes, []]));
  for (const scopes of scopeCounts) await pushDrain(url, { type: "demo.noop", n: scopes * 4, scopes, scopeType: `Sweep${scopes}` });
  for (let r = 0; r < rounds; r++) {
    for (const scopes of scopeCounts) rates.get(scopes).push(await pushDrain(url, { type: "demo.noop", n: jobs, scopes, scopeType: `Sweep${scopes}` }));
  }
  return scopeCounts.map((scopes) => ({ x: scopes, y: Math.round(median(rates.get(scopes))) }));
}
