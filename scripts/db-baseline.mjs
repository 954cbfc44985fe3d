#!/usr/bin/env node
// `npm run db:baseline`: write migrations/scope/baseline.sql — the schema every scope migration makes, which a new
// scope object is made from at once (src/tables/migrate.ts) — from test/tables/baseline.test.ts, which prints it
// when the file is stale. Run after `npm run db:generate` adds a scope migration.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";

const run = spawnSync("npx", ["vitest", "run", "--project", "workers", "test/tables/baseline.test.ts"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
const line = `${run.stdout}\n${run.stderr}`.split("\n").find((l) => l.includes("BASELINE_SQL_JSON "));
if (!line) {
  if (run.status === 0) console.log("migrations/scope/baseline.sql is up to date");
  else console.error(`test/tables/baseline.test.ts failed without a baseline to write:\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-2000)}`);
  process.exit(run.status ?? 1);
}
writeFileSync("migrations/scope/baseline.sql", JSON.parse(line.slice(line.indexOf("BASELINE_SQL_JSON ") + "BASELINE_SQL_JSON ".length)));
console.log("wrote migrations/scope/baseline.sql");
