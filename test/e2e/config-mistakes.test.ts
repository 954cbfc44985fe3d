/**
 * Config mistakes in a project `edgequeue init` wrote, from the packed
 * tarball, as a new user makes them (issue 38):
 *
 * - `npm run check` takes `batchSize` on a type the Worker handles itself (it
 *   reads the handlers from the main module, as createQueue pushes them), and
 *   still refuses it on a pull-only type, naming the field.
 * - `npm run dev` with a mistake in edgequeue.config.ts starts anyway (wrangler
 *   4.86's workerd): every request answers `503 misconfigured` with the
 *   problem, logged once; saving the fix reloads the Worker, which then runs a
 *   job with its own handler.
 */
import { execFileSync, type ExecFileSyncOptions } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "../browser/harness";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let work: string;
let project: string;
let config: string;
let good: string;
let queue: Worker | undefined;

const run = (cmd: string, args: string[], o: ExecFileSyncOptions = {}) => execFileSync(cmd, args, { encoding: "utf8", stdio: "pipe", ...o }) as string;

/** npm, in the project: its exit code and output. */
function npm(args: string[]): { code: number; out: string; err: string } {
  try {
    return { code: 0, out: run("npm", args, { cwd: project }), err: "" };
  } catch (e) {
    const x = e as { status: number; stdout: string; stderr: string };
    return { code: x.status, out: x.stdout, err: x.stderr };
  }
}

/** withTypes: the project's edgequeue.config.ts with its types replaced. */
const withTypes = (types: string) => good.replace(/types: \{[\s\S]*?\n {2}\},/, `types: ${types},`);

async function request(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(queue!.url + pathname, {
    method,
    headers: { authorization: "Bearer dev-token", "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), "edgequeue-config-mistakes-"));
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT })) as { filename: string }[];
  const tarball = path.join(work, packed[0]!.filename);
  const tools = path.join(work, "tools");
  mkdirSync(tools);
  writeFileSync(path.join(tools, "package.json"), JSON.stringify({ name: "tools", private: true }));
  run("npm", ["install", "--no-audit", "--no-fund", tarball], { cwd: tools });
  run(path.join(tools, "node_modules/.bin/edgequeue"), ["init", "my-queue", "--package", tarball], { cwd: work });
  project = path.join(work, "my-queue");
  run("npm", ["install", "--no-audit", "--no-fund"], { cwd: project });
  config = path.join(project, "edgequeue.config.ts");
  good = readFileSync(config, "utf8");
}, 600_000);

afterAll(async () => {
  await queue?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.sequential("config mistakes in a project edgequeue init wrote", () => {
  it("npm run check takes batchSize on a type the Worker handles, and refuses it on a pull-only type, naming the field", () => {
    try {
      writeFileSync(config, withTypes(`{ "welcome.email": { batchSize: 10, leaseMs: 20_000 }, "order.fulfil": { timeoutMs: 60_000 } }`));
      const ok = npm(["run", "check"]);
      expect(ok.code, ok.err).toBe(0);
      expect(ok.out).toMatch(/ok: edgequeue\.config\.ts with wrangler\.jsonc: 2 types/);
      expect(ok.out).not.toMatch(/warning/);

      writeFileSync(config, withTypes(`{ "welcome.email": { batchSize: 10 }, "report.build": { batchSize: 5 } }`));
      const refused = npm(["run", "check"]);
      expect(refused.code).not.toBe(0);
      expect(refused.err).toContain(`config.types["report.build"].batchSize: batchSize applies to pushed jobs: give the type a binding too, or a handler in the queue's Worker`);
      expect(refused.err).not.toContain(`config.types["welcome.email"]`);
    } finally {
      writeFileSync(config, good);
    }
  });

  it("npm run dev with a mistake starts anyway: every request answers 503 with it, logged once; the fix saved reloads the Worker", async () => {
    writeFileSync(config, withTypes(`{ "welcome.email": { concurreny: 2 } }`));
    queue = await startWorker({ cwd: project, npmDev: true, registryDir: path.join(work, "registry") });
    for (const pathname of ["/v1/health", "/v1/stats", "/dashboard"]) {
      const r = await request("GET", pathname);
      expect(r.status, `${pathname}\n${queue.log().slice(-3000)}`).toBe(503);
      expect(r.body.error).toEqual({
        code: "misconfigured",
        message: 'Invalid config in the config given to createQueue (edgequeue.config.ts):\n  - config.types["welcome.email"]: Unrecognized key: "concurreny"; did you mean "concurrency"?',
      });
    }
    expect(queue.log()).not.toMatch(/failed to start/i);
    expect(queue.log().match(/"event":"setup:misconfigured"/g), queue.log().slice(-3000)).toHaveLength(1);

    writeFileSync(config, good);
    let health = { status: 0, body: null as unknown };
    for (let i = 0; i < 240 && health.status !== 200; i++) {
      await sleep(250);
      health = await request("GET", "/v1/health").catch(() => health);
    }
    expect(health.status, queue.log().slice(-3000)).toBe(200);
    const enqueued = await request("POST", "/v1/jobs", { type: "welcome.email", payload: { to: "ada@example.com" } });
    expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(201);
    let job: { state: string; result: unknown } | undefined;
    for (let i = 0; i < 120 && job?.state !== "completed"; i++) {
      job = (await request("GET", `/v1/jobs/${enqueued.body.job.id}`)).body.job;
      if (job?.state !== "completed") await sleep(250);
    }
    expect(job, queue.log().slice(-3000)).toMatchObject({ state: "completed", result: { sentTo: "ada@example.com" } });
  });
});
