/**
 * A team that never clones this repo (README "Start"): the root
 * `npm pack`ed, `npx <tarball> init` run in a folder outside the repo as the
 * README says, then the project's own commands — `npm install`, `npm test`,
 * `npm run check`, a second tsconfig, `wrangler deploy --dry-run`, `npm run
 * dev` — and the operator CLI against the running queue: a job of the
 * project's own type completes with its own in-Worker handler (through
 * ctx.exports, on wrangler 4.86's workerd), and the queue says the packed
 * version. The package itself: what it holds, and that every relative link
 * of its README and docs resolves inside it.
 */
import { execFileSync, type ExecFileSyncOptions } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "../browser/harness";
import { brokenLinks } from "./markdown-links";
import { SHIPPED } from "./package-files";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The version the package is packed with: the queue and the CLI built from it must say it. */
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;

let work: string;
let tarball: string;
let project: string;
let queue: Worker | undefined;
/** The tarball as `npx` is given it (README "Start"). */
let npxSpec: string | undefined;

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
  // README "Start": `npx --yes ./edgequeue-<version>.tgz init my-queue`, a relative path (npx runs an absolute one as a
  // command). Through this run's own folder name: npx keys its cache by the spec as written, and another run of
  // this file at the same time must not share the install.
  const spec = `../${path.basename(work)}/${path.basename(tarball)}`;
  npxSpec = spec;
  const npxInit = () => run("npx", ["--yes", spec, "init", "my-queue"], { cwd: work });
  npxInit();
  project = path.join(work, "my-queue");
  // Refuses a folder that is not empty, and says why.
  const refused = (() => {
    try {
      npxInit();
      return { status: 0, stderr: "" };
    } catch (e) {
      return e as { status: number; stderr: string };
    }
  })();
  expect(refused.status).toBe(2);
  expect(refused.stderr).toMatch(/my-queue is not empty/);
  run("npm", ["install", "--no-audit", "--no-fund"], { cwd: project });
}, 600_000);

/** npx's installs for `spec` in npm's cache (`_npx/<hash>`, named in its package.json): removed after the run. */
function npxInstalls(spec: string): string[] {
  const cache = path.join(run("npm", ["config", "get", "cache"]).trim(), "_npx");
  if (!existsSync(cache)) return [];
  return readdirSync(cache)
    .map((d) => path.join(cache, d))
    .filter((d) => {
      try {
        return (JSON.parse(readFileSync(path.join(d, "package.json"), "utf8")) as { _npx?: { packages?: string[] } })._npx?.packages?.includes(spec) === true;
      } catch {
        return false;
      }
    });
}

afterAll(async () => {
  await queue?.stop();
  if (npxSpec) for (const d of npxInstalls(npxSpec)) rmSync(d, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.sequential("edgequeue init, from the packed tarball, outside the repo", () => {
  it("writes the project: its own config, handlers, test, wrangler.jsonc and a dev token", () => {
    for (const f of ["wrangler.jsonc", "src/index.ts", "src/handlers.ts", "edgequeue.config.ts", "test/handlers.test.ts", ".dev.vars", ".gitignore", "README.md", "package.json"]) {
      expect(existsSync(path.join(project, f)), f).toBe(true);
    }
    // Run from a tarball, init depends on that tarball (relative, as `npm install <path>` writes it): the project
    // installs before edgequeue is on a registry. From a registry it would write ^<version> (test/node/init.test.ts).
    expect(JSON.parse(readFileSync(path.join(project, "package.json"), "utf8")).dependencies.edgequeue).toBe(`file:../${path.basename(tarball)}`);
    expect(JSON.parse(readFileSync(path.join(project, "node_modules/edgequeue/package.json"), "utf8")).version).toBe(VERSION);
    expect(readFileSync(path.join(project, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(20);
  });

  it("the package is the root: built entry points, templates and the docs, no sources or tests", () => {
    const files = run("tar", ["-tzf", tarball]).trim().split("\n");
    for (const f of files) expect(f, f).toMatch(SHIPPED);
    for (const entry of ["index", "handler", "handler-node", "worker", "testing", "outbox", "server"]) expect(files).toContain(`package/dist/${entry}.js`);
    expect(files).toContain("package/dist/cli.js");
    expect(files).toContain("package/docs/coming-from/bullmq.md");
  });

  it("every relative link of the packed README and docs resolves inside the package", () => {
    const unpacked = path.join(work, "unpacked");
    mkdirSync(unpacked);
    run("tar", ["-xzf", tarball, "-C", unpacked]);
    expect(brokenLinks(path.join(unpacked, "package"))).toEqual([]);
    // The check finds what it is for: a file, a heading and a way out of the package that are not there.
    const bad = path.join(work, "bad-links");
    mkdirSync(path.join(bad, "docs"), { recursive: true });
    writeFileSync(path.join(bad, "README.md"), "# Top\n\n[a](#top) [b](docs/x.md#there) `[c](nowhere.md)`\n");
    writeFileSync(path.join(bad, "docs", "x.md"), "## Here\n\n[d](../README.md#nope) [e](../../src/index.ts) [f](y.md)\n");
    expect(brokenLinks(bad).sort()).toEqual(["README.md: docs/x.md#there (no such heading)", "docs/x.md: ../../src/index.ts (outside the package)", "docs/x.md: ../README.md#nope (no such heading)", "docs/x.md: y.md (no such file)"]);
  });

  it("types resolve for a second tsconfig too: one that includes only the tests or only src/jobs.ts, and node10 resolution", () => {
    // Compiles only with src/jobs.ts's JobTypes in force: unaugmented, PayloadOf is any JSON object and the
    // expected error is missing (TS2578). Only tsconfig.typed.json and the node10 one include it: it imports
    // edgequeue itself, which would hide an augmentation that does not load edgequeue's types (TS2664).
    mkdirSync(path.join(project, "typecheck"));
    writeFileSync(
      path.join(project, "typecheck/payloads.ts"),
      `import type { PayloadOf } from "edgequeue";\nimport "../src/jobs";\n\nexport const ok: PayloadOf<"welcome.email"> = { to: "ada@example.com" };\n// @ts-expect-error welcome.email's payload needs \`to\`\nexport const missing: PayloadOf<"welcome.email"> = {};\n`,
    );
    const configs = {
      "tsconfig.tests.json": { extends: "./tsconfig.json", include: ["test"] },
      "tsconfig.jobs.json": { extends: "./tsconfig.json", include: ["src/jobs.ts"] },
      "tsconfig.typed.json": { extends: "./tsconfig.json", include: ["typecheck"] },
      "tsconfig.node10.json": { extends: "./tsconfig.json", compilerOptions: { moduleResolution: "node10" }, include: ["src", "test", "typecheck", "edgequeue.config.ts"] },
    };
    try {
      for (const [name, config] of Object.entries(configs)) {
        writeFileSync(path.join(project, name), JSON.stringify(config, null, 2));
        const tsc = (() => {
          try {
            return { status: 0, out: run("npx", ["tsc", "-p", name, "--noEmit"], { cwd: project }) };
          } catch (e) {
            const x = e as { status: number; stdout: string };
            return { status: x.status, out: x.stdout };
          }
        })();
        expect(tsc, name).toEqual({ status: 0, out: "" });
      }
    } finally {
      for (const name of Object.keys(configs)) rmSync(path.join(project, name));
      rmSync(path.join(project, "typecheck"), { recursive: true });
    }
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
    // The version the package was packed with, inlined at build time: the Worker has no package.json to read.
    expect(await (await fetch(`${queue.url}/v1/health`)).json()).toMatchObject({ ok: true, version: VERSION });
    expect(cli(["--version"])).toEqual({ code: 0, out: `${VERSION}\n`, err: "" });
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
