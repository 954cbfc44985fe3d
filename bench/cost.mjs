#!/usr/bin/env node
/**
 * `npm run bench:cost` (and the cost section of `npm run bench`): what a job
 * costs on Cloudflare's price list, per workload, over its whole life — enqueue,
 * run, retention sweep and the tombstone's expiry — across every Durable Object
 * it touches. The counts come from the objects' own meters (src/metering/) in
 * test/cost/lifecycle.test.ts, run here with COST_REPORT=1: rows written and
 * read from each statement's cursor, and requests (RPC calls, fetches, alarms).
 * They are exact for what ran, not sampled, so unlike a rate they do not depend
 * on the machine; the test asserts a ceiling on each.
 *
 * Written to bench/results/cost.json, and printed as the table of
 * bench/README.md "What a job costs".
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";

/**
 * Cloudflare's published prices, read 2026-12-02 (paid plan, past the included amounts):
 * https://developers.cloudflare.com/durable-objects/platform/pricing/ — requests $0.15 per million (every RPC
 * method call and every alarm is one), duration $12.50 per million GB-s, SQLite rows read $0.001 per million and
 * rows written $1.00 per million; https://developers.cloudflare.com/queues/platform/pricing/ — $0.40 per million
 * operations, three per message (write, read, delete); https://upstash.com/pricing/qstash — QStash pay as you go,
 * $1 per 100,000 messages, each delivery attempt one.
 */
export const PRICES = {
  read: "2026-12-02",
  rowWrittenPerMillion: 1.0,
  rowReadPerMillion: 0.001,
  requestPerMillion: 0.15,
  cloudflareQueuesPerMillionJobs: 1.2,
  qstashPerMillionJobs: 10,
};

/** dollarsPerMillion: what a million of these cost, from rows and requests (duration is not counted here). */
export function dollarsPerMillion(c) {
  return c.rowsWritten * PRICES.rowWrittenPerMillion + c.rowsRead * PRICES.rowReadPerMillion + c.requests * PRICES.requestPerMillion;
}

/**
 * measureCost: every workload's cost; `trace` (`--trace`) adds, per workload, its rows written by statement
 * (test/cost/harness.ts), printed after the table and not written to cost.json.
 */
export function measureCost({ trace = false } = {}) {
  const run = spawnSync("npx", ["vitest", "run", "--project", "workers", "test/cost/lifecycle.test.ts", "test/cost/day.test.ts"], {
    env: { ...process.env, COST_REPORT: "1", ...(trace ? { COST_TRACE: "1" } : {}) },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = `${run.stdout}\n${run.stderr}`.split("\n").find((l) => l.includes("COST_JSON "));
  if (run.status !== 0 || !line) throw new Error(`test/cost/lifecycle.test.ts failed (exit ${run.status}):\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-2000)}`);
  const workloads = JSON.parse(line.slice(line.indexOf("COST_JSON ") + "COST_JSON ".length));
  const rows = Object.entries(workloads).map(([workload, c]) => ({ workload, ...c, dollarsPerMillion: Math.round(dollarsPerMillion(c) * 100) / 100 }));
  // A small team's day (test/cost/day.test.ts): an hour of a mixed workload, its fixed work apart, and a month of it.
  const dayLine = `${run.stdout}\n${run.stderr}`.split("\n").find((l) => l.includes("DAY_JSON "));
  const day = dayLine ? JSON.parse(dayLine.slice(dayLine.indexOf("DAY_JSON ") + "DAY_JSON ".length)) : null;
  return { date: new Date().toISOString(), prices: PRICES, workloads: rows, day };
}

export function costTable(cost) {
  const head = "| workload (whole life, all objects) | rows written | rows read | requests | $ per million | ÷ Cloudflare Queues ($1.20) |\n| --- | ---: | ---: | ---: | ---: | ---: |";
  const lines = cost.workloads.map(
    (w) =>
      `| ${w.workload} (per ${w.per}) | ${w.rowsWritten} | ${w.rowsRead} | ${w.requests} | ${w.dollarsPerMillion.toFixed(2)} | ${(w.dollarsPerMillion / PRICES.cloudflareQueuesPerMillionJobs).toFixed(1)}× |`,
  );
  const day = cost.day
    ? [
        "",
        `A small team's day (test/cost/day.test.ts: ${cost.day.jobsPerDay} jobs a day over 50 tenants): ${cost.day.hour.rowsWritten} rows written an hour`,
        `(${cost.day.fixedRowsWrittenPerHour} of them fixed work: catalog and schedule; ${cost.day.jobsRowsWrittenPerHour} the jobs' own), ${cost.day.rowsWrittenPerJob} per job;`,
        `a month: ${cost.day.month.rowsWritten} rows written, ${cost.day.month.rowsRead} read, ${cost.day.month.requests} requests — $${cost.day.month.dollars}.`,
      ]
    : [];
  return [head, ...lines, ...day].join("\n");
}

/** traceText: each workload's rows written per unit by statement, largest first (`--trace`). */
export function traceText(cost) {
  const parts = [...cost.workloads.map((w) => [w.workload, w.trace]), ["a small team's hour", cost.day?.trace]].filter(([, t]) => t);
  return parts.map(([name, t]) => `\n${name} — rows written per unit | object | statement\n${t.join("\n")}`).join("\n");
}

/** withoutTrace: the cost as bench/results/cost.json keeps it. */
function withoutTrace(cost) {
  const { trace: _dayTrace, ...day } = cost.day ?? {};
  return { ...cost, workloads: cost.workloads.map(({ trace: _trace, ...w }) => w), day: cost.day ? day : null };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const trace = process.argv.includes("--trace");
  const cost = measureCost({ trace });
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/cost.json", `${JSON.stringify(withoutTrace(cost), null, 2)}\n`);
  console.log(costTable(cost));
  if (trace) console.log(traceText(cost));
  console.log(`\nwritten to bench/results/cost.json (prices of ${PRICES.read}; QStash: $${PRICES.qstashPerMillionJobs} per million)`);
}
