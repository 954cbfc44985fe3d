#!/usr/bin/env node
// `npm run check` part 2: the drizzle schema and migrations/ agree. drizzle-kit generates into a
// scratch copy of each migrations folder; if it writes a new migration, src/tables changed
// without `npm run db:generate`.
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, rmSync, writeFileSync } from "node:fs";

const SCRATCH = ".migrations-check"; // relative: drizzle-kit prefixes "./" to `out`
const stale = [];
rmSync(SCRATCH, { recursive: true, force: true });
try {
  for (const db of ["scope", "catalog", "pool", "schedule"]) {
    const out = `${SCRATCH}/${db}`;
    cpSync(`migrations/${db}`, out, { recursive: true });
    const config = `${SCRATCH}/${db}.config.ts`;
    writeFileSync(
      config,
      `import { defineConfig } from "drizzle-kit";\nexport default defineConfig({ dialect: "sqlite", driver: "durable-sqlite", schema: "./src/tables/${db}.ts", out: "./${out}" });\n`,
    );
    const before = readdirSync(out).length;
    const log = execFileSync("node_modules/.bin/drizzle-kit", ["generate", "--config", config], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    if (/\berror\b/i.test(log)) throw new Error(`drizzle-kit failed for ${db}:\n${log}`);
    if (readdirSync(out).length !== before) stale.push(db);
  }
} finally {
  rmSync(SCRATCH, { recursive: true, force: true });
}
if (stale.length) {
  console.error(`migrations/ is behind src/tables for: ${stale.join(", ")}. Run \`npm run db:generate\` and commit the result.`);
  process.exit(1);
}
console.log("migrations/ matches src/tables");
