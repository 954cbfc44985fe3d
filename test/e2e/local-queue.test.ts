/**
 * The local queue as a new user runs it: `wrangler dev` with the coordinator
 * (the same wrangler 4.86 and its workerd that `npm start` runs — not the
 * newer workerd of the "workers" test project), beside projects of the user's
 * own that live outside this repo and install the packed `edgequeue` tarball
 * (`npm pack` at the root) with npm: Worker projects, each in its own `wrangler dev`
 * session joined through one dev registry (README, "Your own Workers beside
 * the local queue"), and a plain Node project running a pull worker.
 *
 * - A handler Worker that is not running yet: its jobs wait unspent, the
 *   queue logs it once, and they run when it starts.
 * - A producer Worker enqueues through a `QUEUE: Service` binding.
 * - A restart whose first event is a scope object's alarm: the object is not
 *   told its name, and must still report to the catalog (stats, claims).
 */
import { execFileSync } from "node:child_process";
import { connect } from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Queue, startQueue, startWorker, type Worker } from "../browser/harness";
import { SHIPPED } from "./package-files";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const COMPAT = "2026-04-20";

let work: string;
let registryDir: string;
let stateDir: string;
let queue: Queue;
const others: Worker[] = [];

let tarball: string;

/** workerToml: a user's Worker bound to the queue's EdgeQueue entrypoint as QUEUE, with `more` config lines. */
function workerToml(name: string, more: string[] = []): string {
  return [`name = "${name}"`, `main = "src/index.ts"`, `compatibility_date = "${COMPAT}"`, ...more, `[[services]]`, `binding = "QUEUE"`, `service = "edgequeue"`, `entrypoint = "EdgeQueue"`].join("\n");
}

/** A project of the user's own, outside this repo, with the packed edgequeue installed by npm. */
function project(name: string, files: Record<string, string>): string {
  const dir = path.join(work, name);
  for (const [file, text] of Object.entries({ "package.json": JSON.stringify({ name, private: true, type: "module", dependencies: { edgequeue: `file:${tarball}` } }), ...files })) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  execFileSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: dir, stdio: "pipe" });
  return dir;
}

async function api(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: any }> {
  const send = () =>
    fetch(queue.url + pathname, {
      method,
      headers: { authorization: `Bearer ${queue.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  // Node's fetch reuses an idle keep-alive connection that wrangler's proxy may have closed meanwhile ("other side
  // closed", UND_ERR_SOCKET): that request never reached the queue, so it is sent once more on a new connection.
  const res = await send().catch((e: { cause?: { code?: string } }) => {
    if (e.cause?.code !== "UND_ERR_SOCKET") throw e;
    return send();
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** until polls `test` every 250 ms until it returns a value, or fails with what it last saw. */
async function until<T>(what: string, test: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await test();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${String(last)})\n--- queue log (tail) ---\n${queue.log().slice(-4000)}`);
    await sleep(250);
  }
}

const job = async (id: string) => (await api("GET", `/v1/jobs/${id}`)).body.job;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "edgequeue-e2e-"));
  // The package as users get it: `npm pack` at the root (prepack builds dist/), installed from the tarball.
  const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT, encoding: "utf8" })) as { filename: string }[];
  tarball = path.join(work, packed[0]!.filename);
  registryDir = path.join(work, "registry");
  stateDir = path.join(work, "state");
  // The coordinator alone: the user's handler Worker is not running yet.
  queue = await startQueue({ configs: ["wrangler.toml"], waitForHandler: false, stateDir, registryDir });
});

afterAll(async () => {
  await Promise.all([queue?.stop(), ...others.map((w) => w.stop())]);
  rmSync(work, { recursive: true, force: true });
});

describe.sequential("the local queue beside Workers of the user's own", () => {
  it("jobs of a handler Worker that is not running wait unspent, logged once, and run when it starts", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await api("POST", "/v1/jobs", { type: "demo.echo", payload: { i } })).body.job.id);
    for (const id of ids) {
      const waiting = await until("a miss", async () => {
        const j = await job(id);
        return j.lastError ? j : undefined;
      });
      expect(waiting).toMatchObject({ state: "pending", attempts: 0 });
      expect(waiting.lastError).toMatch(/^handler unreachable: /);
    }
    // demo.echo's maxAttempts is 3: more misses than that, still unspent.
    await until("four misses", async () => {
      const t = (await api("GET", `/v1/jobs/${ids[0]}/timeline`)).body;
      return t.steps.filter((s: { note: string | null }) => /handler unreachable/.test(s.note ?? "")).length >= 4 ? t : undefined;
    });
    expect((await job(ids[0]!)).attempts).toBe(0);
    expect(queue.log().match(/dispatch:handler_unreachable/g)?.length ?? 0).toBeGreaterThanOrEqual(1);
    // Once per binding per object: each unscoped job here lives in the same type object.
    expect(queue.log().match(/"event":"dispatch:handler_unreachable","binding":"DEMO","home":"type:demo.echo:0"/g)).toHaveLength(1);

    // The user's handler Worker, under the name the queue's wrangler.toml binds as DEMO.
    const handlers = project("my-handlers", {
      "wrangler.toml": `name = "edgequeue-example-handler"\nmain = "src/index.ts"\ncompatibility_date = "${COMPAT}"\n`,
      "src/index.ts": [
        `import { defineHandlers } from "edgequeue/handler";`,
        `export const DemoHandlers = defineHandlers({ "demo.echo": async (payload) => ({ ...payload, by: "my-handlers" }) });`,
        `export default { fetch: () => new Response("my handlers") };`,
      ].join("\n"),
    });
    others.push(await startWorker({ cwd: handlers, config: "wrangler.toml", registryDir }));
    for (const id of ids) {
      const done = await until("completed", async () => {
        const j = await job(id);
        return j.state === "completed" ? j : undefined;
      });
      expect(done).toMatchObject({ attempts: 1, result: { by: "my-handlers" } });
    }
    expect(queue.log()).toMatch(/dispatch:handler_reachable/);
  });

  it("a producer Worker of the user's own enqueues through a QUEUE: Service binding", async () => {
    const producer = project("my-producer", {
      "wrangler.toml": workerToml("my-producer"),
      "src/index.ts": [
        `import { createClient } from "edgequeue";`,
        `interface Env { QUEUE: Service }`,
        `export default {`,
        `  async fetch(request: Request, env: Env) {`,
        `    const { job, created } = await createClient(env.QUEUE).enqueue({ type: "demo.echo", payload: await request.json() });`,
        `    return Response.json({ job, created }, { status: 201 });`,
        `  },`,
        `};`,
      ].join("\n"),
    });
    const worker = await startWorker({ cwd: producer, config: "wrangler.toml", registryDir });
    others.push(worker);
    const res = await fetch(worker.url, { method: "POST", body: JSON.stringify({ from: "producer" }) });
    expect(res.status, worker.log().slice(-2000)).toBe(201);
    const { job: created } = (await res.json()) as { job: { id: string } };
    const done = await until("completed", async () => {
      const j = await job(created.id);
      return j.state === "completed" ? j : undefined;
    });
    expect(done.result).toEqual({ from: "producer", by: "my-handlers" });
  });

  it("a Durable Object of the user's own enqueues through edgequeue/outbox in its own transaction: a job per commit, none for a rollback", async () => {
    const orders = project("my-orders", {
      "wrangler.toml": workerToml("my-orders", [
        `[[durable_objects.bindings]]`,
        `name = "ORDERS"`,
        `class_name = "Orders"`,
        `[[migrations]]`,
        `tag = "v1"`,
        `new_sqlite_classes = ["Orders"]`,
      ]),
      "src/index.ts": [
        `import { DurableObject } from "cloudflare:workers";`,
        `import { createOutbox } from "edgequeue/outbox";`,
        `interface Env { QUEUE: Service; ORDERS: DurableObjectNamespace<Orders> }`,
        `export class Orders extends DurableObject<Env> {`,
        `  outbox = createOutbox(this.ctx.storage, this.env.QUEUE);`,
        `  place(id: string, decline: boolean): string {`,
        `    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY)");`,
        `    try {`,
        `      this.ctx.storage.transactionSync(() => {`,
        `        this.ctx.storage.sql.exec("INSERT INTO orders (id) VALUES (?)", id);`,
        `        this.outbox.enqueue({ type: "demo.echo", payload: { order: id }, id: "order-" + id });`,
        `        if (decline) throw new Error("declined");`,
        `      });`,
        `      return "placed";`,
        `    } catch (e) {`,
        `      return String(e);`,
        `    }`,
        `  }`,
        `  async alarm() {`,
        `    await this.outbox.alarm();`,
        `  }`,
        `}`,
        `export default {`,
        `  async fetch(request: Request, env: Env) {`,
        `    const url = new URL(request.url);`,
        `    return Response.json(await env.ORDERS.getByName("shop").place(url.searchParams.get("id")!, url.searchParams.has("decline")));`,
        `  },`,
        `};`,
      ].join("\n"),
    });
    const worker = await startWorker({ cwd: orders, config: "wrangler.toml", registryDir });
    others.push(worker);
    const tag = String(Date.now());
    const place = async (q: string) => (await (await fetch(`${worker.url}?${q}`)).json()) as string;
    expect(await place(`id=${tag}-1`), worker.log().slice(-2000)).toBe("placed");
    expect(await place(`id=${tag}-2&decline`)).toBe("Error: declined");
    const ofOrder = async (order: string) =>
      ((await api("GET", "/v1/jobs?type=demo.echo&limit=100")).body.items as { id: string; state: string; payload: { order?: string } }[]).filter((j) => j.payload.order === order);
    const done = await until("the placed order's job is in the queue", async () => {
      const jobs = await ofOrder(`${tag}-1`);
      return jobs.length > 0 ? jobs : undefined;
    }).catch((e: Error) => {
      throw new Error(`${e.message}\n--- my-orders log (tail) ---\n${worker.log().slice(-3000)}`);
    });
    expect(done.map((j) => j.id.endsWith(`.order-${tag}-1`))).toEqual([true]);
    expect(await ofOrder(`${tag}-2`)).toEqual([]);
  });

  it("the package carries only what users need, and its types compile in a plain Node ESM project (nodenext, no skipLibCheck)", async () => {
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n").sort();
    for (const f of files) expect(f, f).toMatch(SHIPPED);
    for (const entry of ["index", "handler", "handler-node", "worker", "testing", "outbox", "server"]) {
      expect(files).toContain(`package/dist/${entry}.js`);
      expect(files).toContain(`package/dist/${entry}.d.ts`);
    }
    const dir = project("my-types", {
      "check.ts": [
        `import { createHttpClient, type Job } from "edgequeue";`,
        `import { createWorker, RetryableJobError, SnoozeJobError, JobAbortedError, TerminalJobError as WorkerTerminal } from "edgequeue/worker";`,
        `import { runJob, createFakeQueue, createInlineQueue } from "edgequeue/testing";`,
        `export const thrown = [new RetryableJobError("r", { retryAfterMs: 1 }), new SnoozeJobError(5), new JobAbortedError("cancelled"), new WorkerTerminal("t")];`,
        `import { defineHandlers, TerminalJobError, type JobContext } from "edgequeue/handler";`,
        `import { createOutbox, type Outbox } from "edgequeue/outbox";`,
        `export const makeOutbox: (s: Parameters<typeof createOutbox>[0]) => Outbox = (s) => createOutbox(s, { enqueue: async () => ({}), enqueueBatch: async () => ({}), getJob: async () => ({}), cancelJob: async () => ({}), listJobs: async () => ({}), stats: async () => ({}), metrics: async () => ({}), retryFailed: async () => ({}) });`,
        `const handlers = { "a.b": async (p: { n: number }, ctx: JobContext) => ctx.step("s", () => p.n) };`,
        `export const worker = createWorker({ url: "http://q", token: "t", types: ["a.b"], handlers });`,
        `// docs/pull-workers.md's snippet: inline handlers get their parameters' types from createWorker (no TS7006 under --strict).`,
        `export const inline = createWorker({ url: "http://q", token: "t", types: ["email.send"], handlers: { "email.send": async (payload, ctx) => ctx.log(JSON.stringify(payload), { signal: ctx.signal.aborted }) } });`,
        `export const Handlers = defineHandlers({});`,
        `export async function check(): Promise<Job> {`,
        `  const run = await runJob(handlers, { n: 1 }, { type: "a.b", crashAfter: "s" });`,
        `  if (run.state === "failed") throw new TerminalJobError("no");`,
        `  void createFakeQueue(); void createInlineQueue(handlers);`,
        `  return createHttpClient("http://q", "t").get("x");`,
        `}`,
      ].join("\n"),
    });
    const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--skipLibCheck", "false", "check.ts"], { cwd: dir, encoding: "utf8" });
  });

  it("a pull worker of the user's own, in a plain Node project, drains its jobs and journals a step through the API", async () => {
    const dir = project("my-worker", {
      "main.mjs": [
        `import { createHttpClient } from "edgequeue";`,
        `import { createWorker } from "edgequeue/worker";`,
        `const { QUEUE_URL: url, QUEUE_TOKEN: token } = process.env;`,
        `const client = createHttpClient(url, token);`,
        `const runs = {};`,
        `const worker = createWorker({ url, token, types: ["e2e.work"], concurrency: 4, waitMs: 2000, handlers: {`,
        `  "e2e.work": async (p, ctx) => ({ doubled: await ctx.step("double", () => { runs[ctx.id] = (runs[ctx.id] ?? 0) + 1; return p.n * 2; }) }),`,
        `} });`,
        `const uninstall = worker.installSignalHandlers();`,
        `const stopped = worker.start();`,
        `const ids = [];`,
        `for (let n = 0; n < 5; n++) ids.push((await client.enqueue({ type: "e2e.work", payload: { n } })).job.id);`,
        `let jobs = [];`,
        `for (let i = 0; i < 200; i++) { jobs = await Promise.all(ids.map((id) => client.get(id))); if (jobs.every((j) => j.state === "completed")) break; await new Promise((r) => setTimeout(r, 100)); }`,
        `await worker.stop({ timeoutMs: 1000 }); await stopped; uninstall();`,
        `console.log(JSON.stringify({ results: jobs.map((j) => [j.state, j.result]), runs: Object.values(runs) }));`,
      ].join("\n"),
    });
    const out = execFileSync(process.execPath, ["main.mjs"], { cwd: dir, encoding: "utf8", env: { ...process.env, QUEUE_URL: queue.url, QUEUE_TOKEN: queue.token }, timeout: 60_000 });
    const { results, runs } = JSON.parse(out.trim().split("\n").at(-1)!);
    expect(results).toEqual([0, 1, 2, 3, 4].map((n) => ["completed", { doubled: n * 2 }]));
    expect(runs).toEqual([1, 1, 1, 1, 1]);
  });

  it("a body shorter than its Content-Length is answered 408 within the idle bound (10 s), not held open", async () => {
    const { hostname, port } = new URL(queue.url);
    expect((await api("POST", "/v1/jobs", { type: "demo.echo", payload: {} })).status).toBe(201);
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(`POST /v1/jobs HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${queue.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"type":"demo.echo"`);
      });
      let got = "";
      socket.on("data", (d) => {
        got += d.toString();
        if (got.includes("\r\n\r\n")) (resolve(got), socket.destroy());
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(got));
      setTimeout(() => (resolve(got || "no answer"), socket.destroy()), 20_000);
    });
    const took = Date.now() - started;
    expect(answer.split("\r\n")[0], answer).toBe("HTTP/1.1 408 Request Timeout");
    expect(took).toBeGreaterThanOrEqual(9_000);
    expect(took).toBeLessThan(15_000);
  });

  it("after a restart, a scope object woken cold by its alarm still reports: stats are right and its pull jobs are claimed", async () => {
    const scope = { type: "Tenant", id: `g-${Date.now()}` };
    const pushed = (await api("POST", "/v1/jobs", { type: "demo.echo", payload: { g: 1 }, scope, delayMs: 4_000 })).body.job.id;
    const pulled = (await api("POST", "/v1/jobs", { type: "e2e.pull", payload: {}, scope, delayMs: 4_000 })).body.job.id;
    // Stop at once (a graceful stop is enough), start again on the same state; send the scope object nothing:
    // its first event after the restart is its alarm.
    await queue.stop();
    queue = await startQueue({ configs: ["wrangler.toml"], waitForHandler: false, stateDir, registryDir });
    const stats = await until(
      "the catalog hears the pushed job completed",
      async () => {
        const s = (await api("GET", "/v1/stats?type=demo.echo")).body;
        return s.scheduled === 0 && s.running === 0 && s.pending === 0 ? s : undefined;
      },
      30_000,
    );
    expect(stats.completed).toBeGreaterThanOrEqual(1);
    const claimed = await until(
      "the pull job is handed to a claim",
      async () => {
        const r = (await api("POST", "/v1/claim", { worker: "w", types: ["e2e.pull"] })).body;
        return r.jobs.length > 0 ? r.jobs : undefined;
      },
      30_000,
    );
    expect(claimed.map((j: { id: string }) => j.id)).toEqual([pulled]);
    expect((await job(pushed)).state).toBe("completed");
  });
});
