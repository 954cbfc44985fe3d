/**
 * The Python client and worker (python/; docs/pull-workers.md "From Python"), run by the standard library's test
 * runner against the real queue in a `wrangler dev` of its own (python/tests/test_worker.py starts it): part of
 * `npm test`, so CI runs it too. Python 3.9+ is needed (the machines here have it); without it this fails, saying so.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

describe("the Python package", () => {
  it("passes its unittest suite against the real queue", () => {
    const run = spawnSync("python3", ["-m", "unittest", "discover", "-s", "python/tests", "-t", "python", "-v"], { cwd: root, encoding: "utf8", timeout: 280_000 });
    if (run.error) throw new Error(`python3 could not run (${run.error.message}): the Python package's tests need Python 3.9 or later on PATH`);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stderr).toMatch(/^OK$/m);
  }, 300_000);
});
