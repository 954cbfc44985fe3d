#!/usr/bin/env node
/**
 * `npm run soak [-- --jobs N --scopes N --producers N --fail-rate F --minutes M]`: the
 * queue as `npm start` runs it (the shipped wrangler.toml, the example
 * handler, workerd, state on disk) under concurrent producers, then an audit.
 *
 * Defaults: 50,000 jobs over 200 scopes from 8 producers (90% of chunks as
 * 25-job batches, 10% as single enqueues), with 5% of jobs failing their
 * first attempt (a fifth of those their second too) and 2% drawing on a
 * 2-slot pool. Every job is expected to complete with exactly
 * failTimes + 1 attempts.
 *
 * Reported: jobs/s (first enqueue to last completion), enqueue-to-completion
 * p50/p95/p99 (the queue's own createdAt → finishedAt), and the audit:
 * - lost: enqueued (accepted) jobs not found, or not completed when the run ends;
 * - duplicatedCompletions: jobs with more than one `job:completed` event;
 * - attemptsMismatched: jobs whose recorded attempts ≠ the attempts their
 *   payload makes them need, or ≠ their `job:started` events;
 * - poolLeaked: permits still held in the pool once everything is done.
 * The events are counted by an independent observer Worker (bench/soak/);
 * observer calls are best effort, so events it never received are reported
 * apart (observerEventsMissing). Exits non-zero if any invariant fails or the
 * run does not finish within its time bound. Loopback only; writes
 * bench/results/soak.json.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "smol-toml";
import { call, handlerConnected, listAll, machine, percentile, round, snapshot, startWorker, TOKEN } from "./lib.mjs";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const JOBS = arg("jobs", 50_000);
const SCOPES = arg("scopes", 200);
const PRODUCERS = arg("producers", 8);
const FAIL_RATE = arg("fail-rate", 0.05);
const POOLED_RATE = 0.02;
const CHUNK = 25;
const DEADLINE_MS = arg("minutes", 20) * 60_000;

const log = (...a) => console.log(...a);
const state = mkdtempSync(path.join(os.tmpdir(), "edgequeue-soak-"));
const soakConfig = path.join(state, "wrangler.toml");
/** The tree the session runs from: a copy taken at the start, so edits during the run cannot reload it (bench/lib.mjs). */
const tree = path.join(state, "tree");

/**
 * The shipped wrangler.toml plus its observer (the soak's auditor), written
 * beside the run's state. Its token is a var there: the queue is not the first
 * Worker of this `wrangler dev`, so `--var` would not reach it, and a
 * .dev.vars beside the shipped config would override it.
 */
function writeSoakConfig() {
  const config = parse(readFileSync(path.join(tree, "wrangler.toml"), "utf8"));
  config.main = path.resolve(tree, config.main);
  config.vars.QUEUE_TOKEN = TOKEN;
  config.vars.EDGEQUEUE_CONFIG.observer = "AUDIT";
  config.services = [...(config.services ?? []), { binding: "AUDIT", service: "edgequeue-soak-auditor", entrypoint: "Auditor" }];
  writeFileSync(soakConfig, `# Written by bench/soak.mjs for one run.\n${stringify(config)}\n`);
}

/** A deterministic job mix (a seeded generator, so two runs enqueue the same work). */
function plan() {
  let seed = 0x5eed;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  const chunks = [];
  for (let c = 0; c * CHUNK < JOBS; c++) {
    const scope = { type: "Tenant", id: `t${c % SCOPES}` };
    const jobs = [];
    for (let i = 0; i < Math.min(CHUNK, JOBS - c * CHUNK); i++) {
      const r = random();
      if (r < FAIL_RATE) jobs.push({ type: "demo.flaky", scope, payload: { failTimes: r < FAIL_RATE / 5 ? 2 : 1 } });
      else if (r < FAIL_RATE + POOLED_RATE) jobs.push({ type: "demo.pooled.a", scope, payload: { ms: 0 } });
      else jobs.push({ type: "demo.noop", scope, payload: {} });
    }
    chunks.push({ singles: c % 10 === 0, jobs });
  }
  return chunks;
}

const expectedAttempts = (job) => (job.type === "demo.flaky" ? job.payload.failTimes + 1 : 1);


/** produce: PRODUCERS workers take chunks in order; returns the accepted jobs' ids with their plan entry. */
async function produce(url, chunks) {
  const accepted = new Map();
  let next = 0;
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (next < chunks.length) {
        const { singles, jobs } = chunks[next++];
        if (singles) {
          for (const job of jobs) accepted.set((await call(url, "POST", "/v1/jobs", job)).job.id, job);
        } else {
          const { results } = await call(url, "POST", "/v1/jobs/batch", { jobs });
          results.forEach((r, i) => accepted.set(r.job.id, jobs[i]));
        }
      }
    }),
  );
  return accepted;
}

async function outstanding(url) {
  let n = 0;
  for (const type of ["demo.noop", "demo.flaky", "demo.pooled.a"]) {
    const s = await call(url, "GET", `/v1/stats?type=${type}`);
    n += s.pending + s.scheduled + s.running;
  }
  return n;
}

/** Every job of every soak scope, read from the scope objects themselves. */
async function listScopes(url) {
  const jobs = new Map();
  for (let s = 0; s < SCOPES; s++) for (const j of await listAll(url, { scopeType: "Tenant", scopeId: `t${s}` })) jobs.set(j.id, j);
  return jobs;
}

function audit(accepted, records, counts, pool) {
  const events = new Map();
  for (const [id, event, n] of counts) {
    const e = events.get(id) ?? {};
    e[event] = n;
    events.set(id, e);
  }
  const result = { lost: 0, duplicatedCompletions: 0, attemptsMismatched: 0, poolLeaked: pool.permits, observerEventsMissing: 0, retries: 0 };
  const examples = [];
  for (const [id, planned] of accepted) {
    const job = records.get(id);
    const e = events.get(id) ?? {};
    if (!job || job.state !== "completed") {
      result.lost++;
      examples.push({ id, problem: "lost", state: job?.state ?? "missing" });
      continue;
    }
    if ((e["job:completed"] ?? 0) > 1) {
      result.duplicatedCompletions++;
      examples.push({ id, problem: "completed twice", events: e });
    }
    const started = e["job:started"] ?? 0;
    if (job.attempts !== expectedAttempts(planned) || started > job.attempts) {
      result.attemptsMismatched++;
      examples.push({ id, problem: "attempts", attempts: job.attempts, expected: expectedAttempts(planned), events: e });
    }
    if (!e["job:completed"] || started < job.attempts) result.observerEventsMissing++;
    result.retries += job.attempts - 1;
  }
  return { result, examples: examples.slice(0, 10) };
}

async function main() {
  log(`edgequeue soak: ${JOBS} jobs, ${SCOPES} scopes, ${PRODUCERS} producers, ${FAIL_RATE * 100}% failing — state in ${state}`);
  snapshot(tree);
  writeSoakConfig();
  // A free port and a dev registry of its own, too: the auditor's QUEUE binding and the queue's
  // DEMO binding stay inside this session whatever else runs (bench/lib.mjs).
  const queue = await startWorker({
    cwd: tree,
    config: ["bench/soak/wrangler.toml", soakConfig, "examples/handler/wrangler.toml"],
    persistTo: path.join(state, "queue"),
  });
  let failed = false;
  try {
    await handlerConnected(queue.url);
    const chunks = plan();
    const t0 = Date.now();
    const accepted = await produce(queue.url, chunks);
    const produced = Date.now();
    log(`  enqueued ${accepted.size} jobs in ${((produced - t0) / 1000).toFixed(1)} s (${(accepted.size / ((produced - t0) / 1000)).toFixed(0)}/s)`);

    let left = await outstanding(queue.url);
    while (left > 0 && Date.now() - t0 < DEADLINE_MS) {
      await new Promise((r) => setTimeout(r, 1000));
      left = await outstanding(queue.url);
      log(`  outstanding: ${left}`);
    }
    const records = await listScopes(queue.url);
    const counts = await (await fetch(`${queue.url}/counts`)).json();
    const pool = (await call(queue.url, "GET", "/v1/pools")).pools.find((p) => p.name === "demo-pool");

    const done = [...accepted.keys()].map((id) => records.get(id)).filter((j) => j?.state === "completed");
    const lastFinish = Math.max(...done.map((j) => j.finishedAt));
    const firstCreate = Math.min(...done.map((j) => j.createdAt));
    const latencies = done.map((j) => j.finishedAt - j.createdAt);
    const { result, examples } = audit(accepted, records, counts, pool);
    const report = {
      at: new Date().toISOString(),
      machine: machine(),
      workload: { jobs: JOBS, scopes: SCOPES, producers: PRODUCERS, failRate: FAIL_RATE, pooledRate: POOLED_RATE, chunk: CHUNK },
      accepted: accepted.size,
      completed: done.length,
      enqueuePerSec: round(accepted.size / ((produced - t0) / 1000), 0),
      jobsPerSec: round(done.length / ((lastFinish - firstCreate) / 1000), 0),
      latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
      audit: result,
      examples,
    };
    writeFileSync("bench/results/soak.json", `${JSON.stringify(report, null, 2)}\n`);
    log(JSON.stringify(report, null, 2));
    failed = result.lost > 0 || result.duplicatedCompletions > 0 || result.attemptsMismatched > 0 || result.poolLeaked > 0;
    if (failed) log("SOAK FAILED: an invariant does not hold (see audit and examples above)");
  } finally {
    await queue.stop();
    rmSync(state, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  rmSync(state, { recursive: true, force: true });
  console.error(e);
  process.exit(1);
});
