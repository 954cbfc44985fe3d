/**
 * A team that never clones this repo (README "Start"): the root
 * `npm pack`ed, `edgequeue init` run from that tarball in a folder outside the
 * repo, then the project's own commands — `npm install`, `npm test`, `npm run
 * check`, `wrangler deploy --dry-run`, `npm run dev` — and the operator CLI
 * against the running queue: a job of the project's own type completes with
 * its own in-Worker handler (through ctx.exports, on wrangler 4.86's workerd).
 */
import { execFileSync, type ExecFileSyncOptions } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "../browser/harness";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let work: string;
let tarball: string;
let project: string;
let queue: Worker | undefined;

const run = (cmd: string, args: string[], o: ExecFileSyncOptions = {}) => execFileSync(cmd, args, { encoding: "utf8", stdio: "pipe", ...o }) as string;

/** cli: the project's installed `edgequeue` bin against the running queue; resolves with its exit code and output. */
function cli(args: string[]): { code: number; out: string; err: string } {
  try {
    const out = run(path.join(project, "node_modules/.bin/edgequeue"), args, { cwd: project, env: { ...process.env, ...(queue ? { EDGEQUEUE_URL: queue.url } : {}) } });
    return { code: 0, out, err: "" };
  } catch (e) {
    const x = e as { status: number; stdout: string; stderr: string };
    return { code: x.status, out: x.stdout, err: x.stderr };
  }
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), "edgequeue-init-"));
  // `npm pack` at the root: prepack builds dist/, `files` picks what ships.
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT })) as { filename: string }[];
  tarball = path.join(work, packed[0]!.filename);
  // The bin, from the tarball, as `npx edgequeue init` would run it.
  const tools = path.join(work, "tools");
  mkdirSync(tools);
  writeFileSync(path.join(tools, "package.json"), JSON.stringify({ name: "tools", private: true }));
  run("npm", ["install", "--no-audit", "--no-fund", tarball], { cwd: tools });
  const bin = path.join(tools, "node_modules/.bin/edgequeue");
  run(bin, ["init", "my-queue", "--package", tarball], { cwd: work });
  project = path.join(work, "my-queue");
  // Refuses a folder that is not empty, and says why.
  const refused = (() => {
    try {
      run(bin, ["init", "my-queue"], { cwd: work });
      return { status: 0, stderr: "" };
    } catch (e) {
      return e as { status: number; stderr: string };
    }
  })();
  expect(refused.status).toBe(2);
  expect(refused.stderr).toMatch(/my-queue is not empty/);
  run("npm", ["install", "--no-audit", "--no-fund"], { cwd: project });
}, 600_000);

afterAll(async () => {
  await queue?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.sequential("edgequeue init, from the packed tarball, outside the repo", () => {
  it("writes the project: its own config, handlers, test, wrangler.jsonc and a dev token", () => {
    for (const f of ["wrangler.jsonc", "src/index.ts", "src/handlers.ts", "edgequeue.config.ts", "test/handlers.test.ts", ".dev.vars", ".gitignore", "README.md", "package.json"]) {
      expect(existsSync(path.join(project, f)), f).toBe(true);
    }
    expect(JSON.parse(readFileSync(path.join(project, "package.json"), "utf8")).dependencies.edgequeue).toBe(`file:${tarball}`);
    expect(readFileSync(path.join(project, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(20);
  });

  it("the package is the root: built entry points and templates, no sources or tests", () => {
    const files = run("tar", ["-tzf", tarball]).trim().split("\n");
    for (const f of files) expect(f, f).toMatch(/^package\/(package\.json|README\.md|CHANGELOG\.md|LICENSE|dist\/[\w.-]+\.(js|d\.ts)|docs\/[\w.-]+\.md|templates\/init\/.+)$/);
    for (const entry of ["index", "handler", "handler-node", "worker", "testing", "outbox", "server"]) expect(files).toContain(`package/dist/${entry}.js`);
    expect(files).toContain("package/dist/cli.js");
  });

  it("its own npm test, npm run check and wrangler deploy --dry-run pass", () => {
    expect(run("npm", ["test"], { cwd: project })).toMatch(/2 passed/);
    expect(run("npm", ["run", "check"], { cwd: project })).toMatch(/ok: edgequeue\.config\.ts with wrangler\.jsonc: 2 types/);
    const dry = run("npx", ["wrangler", "deploy", "--dry-run", "--outdir", path.join(work, "out")], { cwd: project });
    expect(dry).toMatch(/env\.SCOPE \(ScopeDO\)/);
    expect(dry).toMatch(/--dry-run: exiting now/);
  });

  it("edgequeue check refuses a misspelled key, naming the field and the key it meant", () => {
    const config = path.join(project, "edgequeue.config.ts");
    const good = readFileSync(config, "utf8");
    writeFileSync(config, good.replace("timeoutMs: 60_000", "timeoutMs: 60_000, concurreny: 10"));
    try {
      const r = cli(["check"]);
      expect(r.code).toBe(1);
      expect(r.err).toContain('config.types["order.fulfil"]: Unrecognized key: "concurreny"; did you mean "concurrency"?');
    } finally {
      writeFileSync(config, good);
    }
  });

  it("npm run dev runs the queue and its handlers; the CLI enqueues, reads, pauses and counts", async () => {
    queue = await startWorker({ cwd: project, npmDev: true, registryDir: path.join(work, "registry") });
    const enqueued = cli(["enqueue", "order.fulfil", '{"orderId":"42"}', "--json"]);
    expect(enqueued.code, enqueued.err + queue.log().slice(-3000)).toBe(0);
    const id = JSON.parse(enqueued.out).id as string;
    let job: { state: string; result: unknown } | undefined;
    for (let i = 0; i < 120 && job?.state !== "completed"; i++) {
      const got = cli(["jobs", "get", id, "--json"]);
      expect(got.code, got.err).toBe(0);
      job = JSON.parse(got.out).job;
      if (job?.state !== "completed") await sleep(250);
    }
    expect(job, queue.log().slice(-3000)).toMatchObject({ state: "completed", result: { reservation: "reservation-42", charge: `charge-${id}:charge` } });
    expect(cli(["jobs", "get", id]).out).toMatch(/^result\s+\{"reservation":"reservation-42"/m);

    const paused = cli(["types", "pause", "welcome.email", "--json"]);
    expect(JSON.parse(paused.out)).toMatchObject({ type: "welcome.email", paused: true });
    expect(cli(["types", "list"]).out).toMatch(/welcome\.email\s+yes\s+yes\s+yes/);
    expect(JSON.parse(cli(["types", "resume", "welcome.email", "--json"]).out)).toMatchObject({ paused: false });
    const stats = cli(["stats", "--json"]);
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.out).completed).toBeGreaterThanOrEqual(1);

    // A refusal from the API: code and status on stderr, exit 1. A wrong command line: exit 2.
    const missing = cli(["jobs", "get", "no-such-job"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^error: (not_found|invalid_request) \(HTTP (404|400)\)/);
    expect(cli(["jobs", "gte", id]).code).toBe(2);
    expect(cli(["--token", "wrong", "stats"]).err).toMatch(/error: unauthorized \(HTTP 401\)/);
  });
});
