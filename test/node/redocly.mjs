/**
 * Node-only glue for test/node/openapi.test.ts: write the generated document
 * where `npx redocly lint` can read it, and run the Redocly CLI on it.
 *
 * JavaScript, not TypeScript, because `npm run check` type-checks the .ts
 * files under test/ against the Workers types (tsconfig.json); Node's types
 * there would leak into src and hide a Node API used in the Worker.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Where the document is written: `npx redocly lint .test-build/openapi.json` lints what the tests linted. */
export const DOCUMENT_PATH = ".test-build/openapi.json";

/**
 * writeDocument writes `doc` to DOCUMENT_PATH (under the repo root).
 * @param {unknown} doc
 * @returns {string} the absolute path
 */
export function writeDocument(doc) {
  const file = resolve(root, DOCUMENT_PATH);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  return file;
}

/**
 * lint runs `redocly lint` (the installed @redocly/cli, the repo's redocly.yaml) on a file.
 * The CLI bundles its own @redocly/openapi-core, so there is no library to import.
 * @param {string} file
 * @returns {{ status: number | null, totals: { errors: number, warnings: number, ignored: number }, problems: Array<{ ruleId: string, severity: string, message: string, location: Array<{ pointer?: string }> }>, output: string }}
 */
export function lint(file) {
  const run = spawnSync(process.execPath, [resolve(root, "node_modules/@redocly/cli/bin/cli.js"), "lint", file, "--config", resolve(root, "redocly.yaml"), "--format", "json"], {
    cwd: root,
    encoding: "utf8",
    // No network here: no telemetry, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    timeout: 60_000,
  });
  const output = `${run.stdout}\n${run.stderr}`;
  const start = run.stdout.indexOf("{");
  if (start < 0) throw new Error(`redocly lint printed no JSON report (exit ${run.status}):\n${output}`);
  const report = JSON.parse(run.stdout.slice(start));
  return { status: run.status, totals: report.totals, problems: report.problems, output };
}
