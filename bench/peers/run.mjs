#!/usr/bin/env node
/**
 * `npm run bench:peers`: the same workloads, in one run on this machine,
 * against edgequeue (local workerd), Cloudflare Queues on the same local
 * runtime (bench/cfq), BullMQ on Redis and pg-boss on PostgreSQL (the Debian packages, started here on loopback with their data
 * in a temporary directory, stopped after). Each figure is also reported as a
 * ratio peer ÷ edgequeue.
 *
 * - enqueue, one at a time: jobs/s, one producer awaiting each call;
 * - enqueue, 16 in flight: jobs/s;
 * - enqueue in batches of 1,000 (POST /v1/jobs/batch, addBulk, insert),
 *   one batch at a time: jobs/s;
 * - for reference, the platform's own ceiling on this machine: a bare Durable
 *   Object doing one SQLite INSERT per HTTP request (bench/bare/), one at a
 *   time and 16 in flight;
 * - drain 5,000 jobs with 16-way concurrency: jobs/s from the consumers'
 *   start to the last completion (each system's consumer styles, see the
 *   adapters);
 * - pickup latency: enqueue → handler start on an idle queue, sequential;
 * - 1-second delay lateness: handler start − (enqueue time + 1 s), jobs
 *   enqueued 50 ms apart.
 *
 * Every producer and consumer of the peers runs in this Node process over
 * loopback TCP; edgequeue's run over loopback HTTP, its pushed handler in
 * workerd. Writes bench/results/peers.json and peers.md.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { call, handlerConnected, machine, median, percentile, rate, round, snapshot, startWorker, TOKEN } from "../lib.mjs";
import { requireServers, startPostgres, startRedis } from "./servers.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
process.chdir(path.join(here, "../.."));
const log = (...a) => console.log(...a);
const CONCURRENCY = 16;
const W = { serial: 1000, inFlight: 3000, batches: 10, batchSize: 1000, rounds: 3, drain: 5000, pickups: 100, delayed: 60, delayGapMs: 50 };

/** The peers' client libraries live apart from the queue's dependencies; install them on first use. */
function installPeers() {
  if (existsSync(path.join(here, "node_modules/bullmq")) && existsSync(path.join(here, "node_modules/pg-boss"))) return;
  log("installing the peers' client libraries (bench/peers/package.json)…");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: here, stdio: "inherit" });
}

const version = (pkg) => JSON.parse(readFileSync(path.join(here, "node_modules", pkg, "package.json"), "utf8")).version;

async function pickup(system) {
  const ms = [];
  for (let i = 0; i < W.pickups; i++) {
    const t0 = Date.now();
    const h = await system.submit();
    ms.push((await h.started()) - t0);
  }
  return ms;
}

async function lateness(system) {
  const handles = [];
  for (let i = 0; i < W.delayed; i++) {
    const due = Date.now() + 1000;
    handles.push({ due, h: await system.submit({ delayMs: 1000 }) });
    await new Promise((r) => setTimeout(r, W.delayGapMs));
  }
  const ms = [];
  for (const { due, h } of handles) ms.push((await h.started()) - due);
  return ms;
}

async function main() {
  installPeers();
  const bins = requireServers();
  const { openBullmq } = await import("./bullmq.mjs");
  const { openPgBoss } = await import("./pgboss.mjs");
  const { openEdgequeue } = await import("./edgequeue.mjs");
  const { openCfQueues } = await import("./cfqueues.mjs");

  const state = mkdtempSync(path.join(os.tmpdir(), "edgequeue-peers-"));
  const redis = await startRedis(bins.redis, 6391);
  const pg = await startPostgres(bins.pg, 5439);
  // From a copy of the tree, on free ports, each with a dev registry of its own (bench/lib.mjs).
  const cwd = snapshot(path.join(state, "tree"));
  const queue = await startWorker({ cwd, config: ["wrangler.toml", "examples/handler/wrangler.toml"], persistTo: path.join(state, "queue"), vars: { QUEUE_TOKEN: TOKEN } });
  const bare = await startWorker({ cwd, config: "bench/bare/wrangler.toml", persistTo: path.join(state, "bare") });
  const cfq = await startWorker({ cwd, config: "bench/cfq/wrangler.toml", persistTo: path.join(state, "cfq") });
  const insert = (i) => call(bare.url, "POST", "/", { type: "bench.bare", payload: { i, to: "someone@example.com" } });
  const systems = [];
  try {
    await handlerConnected(queue.url);
    systems.push(openEdgequeue(queue.url), openCfQueues(cfq.url), await openBullmq(6391), await openPgBoss(pg.connection));
    const figures = Object.fromEntries(systems.map((s) => [s.name, { drain: {} }]));

    // Rounds alternate between the systems so that a noisy moment on this shared machine
    // does not land on one of them only; each figure is the median of its rounds.
    for (const s of systems) await rate(200, CONCURRENCY, s.enqueue);
    await rate(200, CONCURRENCY, insert);
    const runs = Object.fromEntries([...systems.map((s) => s.name), "bare"].map((n) => [n, { serial: [], inFlight: [], batch: [] }]));
    for (let r = 0; r < W.rounds; r++) {
      for (const s of systems) {
        runs[s.name].serial.push(await rate(W.serial, 1, s.enqueue));
        runs[s.name].inFlight.push(await rate(W.inFlight, CONCURRENCY, s.enqueue));
        runs[s.name].batch.push((await rate(W.batches, 1, (b) => s.enqueueBatch(b, W.batchSize))) * W.batchSize);
      }
      runs.bare.serial.push(await rate(W.serial, 1, insert));
      runs.bare.inFlight.push(await rate(W.inFlight, CONCURRENCY, insert));
      log(`  enqueue round ${r + 1}: ${Object.entries(runs).map(([n, x]) => `${n} ${x.serial.at(-1).toFixed(0)}/s serial, ${x.inFlight.at(-1).toFixed(0)}/s ×16${x.batch.length ? `, ${x.batch.at(-1).toFixed(0)}/s batched` : ""}`).join("; ")}`);
    }
    for (const s of systems) {
      figures[s.name].enqueueSerialPerSec = Math.round(median(runs[s.name].serial));
      figures[s.name].enqueue16PerSec = Math.round(median(runs[s.name].inFlight));
      figures[s.name].enqueueBatchedPerSec = Math.round(median(runs[s.name].batch));
    }
    const reference = { bareInsertSerialPerSec: Math.round(median(runs.bare.serial)), bareInsert16PerSec: Math.round(median(runs.bare.inFlight)) };

    for (const s of systems) {
      for (const [style, drain] of Object.entries(s.drains)) {
        const perSec = await drain(W.drain, CONCURRENCY);
        figures[s.name].drain[style] = Math.round(perSec);
        log(`  drain ${s.name} (${style}): ${perSec.toFixed(0)} jobs/s`);
      }
    }

    for (const s of systems) {
      const p = await pickup(s);
      const l = await lateness(s);
      figures[s.name].pickupP50Ms = percentile(p, 50);
      figures[s.name].pickupP95Ms = percentile(p, 95);
      figures[s.name].delayLatenessP50Ms = percentile(l, 50);
      figures[s.name].delayLatenessP95Ms = percentile(l, 95);
      log(`  ${s.name}: pickup p50 ${percentile(p, 50)} ms p95 ${percentile(p, 95)} ms; 1 s delay lateness p50 ${percentile(l, 50)} ms p95 ${percentile(l, 95)} ms`);
    }

    const result = {
      date: new Date().toISOString(),
      machine: {
        ...machine(),
        redis: execFileSync(bins.redis, ["--version"]).toString().trim(),
        postgres: execFileSync(path.join(bins.pg, "postgres"), ["--version"]).toString().trim(),
        bullmq: version("bullmq"),
        pgBoss: version("pg-boss"),
      },
      settings: { redis: redis.settings, postgres: pg.settings, concurrency: CONCURRENCY, workload: W },
      figures,
      reference,
    };
    writeFileSync("bench/results/peers.json", `${JSON.stringify(result, null, 2)}\n`);
    const table = markdown(figures, reference);
    writeFileSync("bench/results/peers.md", `${table}\n`);
    log(table);
    log("wrote bench/results/peers.json and bench/results/peers.md");
  } finally {
    for (const s of systems) await s.close().catch((e) => console.error(`closing ${s.name}:`, e.message));
    await queue.stop();
    await bare.stop();
    await cfq.stop();
    await redis.stop();
    await pg.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

/**
 * The tables for bench/README.md: per workload each peer's figure and its
 * ratio to edgequeue's; then every drain style against edgequeue's two.
 */
function markdown(figures, reference) {
  const eq = figures.edgequeue;
  const peers = Object.keys(figures).filter((n) => n !== "edgequeue");
  const ratio = (a, b) => (b ? round(a / b, 2) : "—");
  const rows = [
    ["enqueue, one at a time (jobs/s)", "enqueueSerialPerSec"],
    ["enqueue, 16 in flight (jobs/s)", "enqueue16PerSec"],
    ["enqueue, batches of 1,000 (jobs/s)", "enqueueBatchedPerSec"],
    ["pickup p50 (ms)", "pickupP50Ms"],
    ["pickup p95 (ms)", "pickupP95Ms"],
    ["1 s delay lateness p50 (ms)", "delayLatenessP50Ms"],
    ["1 s delay lateness p95 (ms)", "delayLatenessP95Ms"],
  ].map(([label, key]) => `| ${label} | ${eq[key]} | ${peers.map((p) => `${figures[p][key]} | ${ratio(figures[p][key], eq[key])}`).join(" | ")} |`);
  const [pull, push] = Object.values(eq.drain);
  const drains = Object.entries(figures).flatMap(([name, f]) =>
    Object.entries(f.drain).map(([style, v]) => `| ${name} | ${style} | ${v} | ${ratio(v, pull)} | ${ratio(v, push)} |`),
  );
  return [
    `| workload | edgequeue | ${peers.map((p) => `${p} | ${p} ÷ edgequeue`).join(" | ")} |`,
    `|---|---|${peers.map(() => "---|---").join("|")}|`,
    ...rows,
    `| *platform reference: bare Durable Object insert over HTTP, one at a time / 16 in flight (/s)* | ${reference.bareInsertSerialPerSec} / ${reference.bareInsert16PerSec} | ${peers.map(() => "— | —").join(" | ")} |`,
    "",
    "| drain 5,000 jobs, 16-way | consumer | jobs/s | ÷ edgequeue pull | ÷ edgequeue push |",
    "|---|---|---|---|---|",
    ...drains,
  ].join("\n");
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
