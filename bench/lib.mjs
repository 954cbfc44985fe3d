// Shared pieces of the benchmark scripts: starting wrangler dev, HTTP calls, timing, machine facts.
import { spawn } from "node:child_process";
import { cpSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const TOKEN = "bench-token";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/*
 * Every `wrangler dev` started here is cut off from every other one on the machine — the other
 * sessions of the same run, a developer's `npm start`, another bench, the browser tests — in three
 * ways, because by default they share three things (wrangler 4.86.0 and the miniflare it bundles,
 * node_modules/wrangler/node_modules/miniflare 4.20260426.0):
 *
 * 1. The dev registry. wrangler dev passes `registry: getRegistryPath()` to its dev config
 *    (wrangler-dist/cli.js:319978; there is no CLI flag to turn it off, only unstable_dev's
 *    disableDevRegistry), which reaches miniflare as `unsafeDevRegistryPath: config.devRegistry`
 *    (cli.js:65254). getRegistryPath (cli.js:37282) is $WRANGLER_REGISTRY_PATH, else
 *    <global wrangler config dir>/registry (~/.config/.wrangler/registry): one directory for every
 *    session of the user. In it miniflare's DevRegistry (its dist/src/index.js:86696-86830) keeps one
 *    file per Worker *name*: register() overwrites whatever another session wrote under that name,
 *    unregister() on exit deletes the file whoever wrote it, and a service binding to a Worker the
 *    session does not run itself (the "quiet" coordinator's DEMO below) goes to whichever session
 *    wrote that name last — a developer's `npm start` included, whose Workers have the same names.
 *    So each session gets a registry directory of its own (WRANGLER_REGISTRY_PATH, below).
 * 2. Ports. Fixed ports (the bench had 8796-8799, the soak 8795) collide with another bench or a
 *    second `wrangler dev --port 8799`, and then requests reach the other session. Each session gets a
 *    free port and a free inspector port (wrangler's default inspector port, 9229, is shared too).
 * 3. The source tree. wrangler dev always bundles in watch mode (esbuild ctx.watch(), cli.js:136492,
 *    `watch: true` at cli.js:313469) and watches its config files (cli.js:314436), and a rebuild
 *    reloads workerd on new ports: a non-GET request in flight then gets 503 "Your worker restarted
 *    mid-request" (wrangler-dist/ProxyWorker.js:146), and a config caught half-written makes wrangler
 *    dev exit ("Missing entry-point", then ECONNREFUSED). An edit to src/ or wrangler.toml during a
 *    run — by whoever shares the checkout — would land mid-measurement. So a run starts its sessions
 *    from a copy of the tree taken when it starts (snapshot() below): it measures one version of the
 *    code, and edits cannot reach it.
 *
 * That 503 does not always mean a restart: ProxyWorker.js:129-130 compares the failed request's URL
 * (path included) with the worker's origin + "/" (urlFromParts), so any failed proxy → worker fetch
 * of a non-GET request to a path other than "/" is answered with it. One isolated session alone still
 * gets it now and then in the pull drain after the push drain ("Connection reset by peer" / "Network
 * connection lost" in wrangler's proxy runtime, with BENCH_WRANGLER_LOGS); that is not another session.
 */

/** The files `wrangler dev` needs for every config the bench and soak run (sources, configs, migrations, the package's exports). */
const TREE = ["package.json", "tsconfig.json", "wrangler.toml", "src", "migrations", "examples/handler", "bench/bare", "bench/pool", "bench/soak", "bench/cfq"];

/**
 * snapshot copies the sources and configs into `dir` (node_modules is linked, not copied) and
 * returns it: start sessions with `cwd: snapshot(...)` so edits made during the run do not reload them.
 */
export function snapshot(dir) {
  mkdirSync(dir, { recursive: true });
  const skip = new Set([".wrangler", "node_modules", ".dev.vars"]);
  for (const p of TREE) cpSync(path.join(ROOT, p), path.join(dir, p), { recursive: true, filter: (src) => !skip.has(path.basename(src)) });
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "junction");
  return dir;
}

/** freePorts: n distinct ports free on 127.0.0.1 right now (held together while choosing, so they differ). */
export async function freePorts(n) {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const s = createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/**
 * startWorker runs `wrangler dev` for one config (or several, in one session) from `cwd` (default:
 * this process's), on a free port and inspector port, with its own state dir and dev registry;
 * resolves once it answers.
 */
export async function startWorker({ config, persistTo, vars = {}, cwd = process.cwd() }) {
  const [port, inspectorPort] = await freePorts(2);
  const registry = mkdtempSync(path.join(os.tmpdir(), "edgequeue-registry-"));
  const configs = (Array.isArray(config) ? config : [config]).flatMap((c) => ["-c", c]);
  // BENCH_WRANGLER_LOGS=<dir> keeps each session's whole output there, at debug level (reloads show as
  // "reloadStart" events), to find out why a run failed; by default only errors are logged.
  const logDir = process.env.BENCH_WRANGLER_LOGS;
  const args = ["dev", ...configs, "--port", String(port), "--inspector-port", String(inspectorPort), "--ip", "127.0.0.1", "--persist-to", persistTo, "--log-level", logDir ? "debug" : "error"];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child = spawn(process.execPath, [path.join(cwd, "node_modules/wrangler/bin/wrangler.js"), ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    // WRANGLER_REGISTRY_PATH: this session's own dev registry (see the top of this file).
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_REGISTRY_PATH: registry },
  });
  const stop = async () => {
    await stopChild(child);
    rmSync(registry, { recursive: true, force: true });
  };
  // Keep the tail only: a long run logs a line per lifecycle event.
  let log = "";
  const keep = (d) => (log = (log + d).slice(-20_000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  if (logDir) {
    mkdirSync(logDir, { recursive: true });
    const file = createWriteStream(path.join(logDir, `${[config].flat().map((c) => path.basename(path.dirname(path.resolve(cwd, c))) + "-" + path.basename(c, ".toml")).join("+")}-${port}.log`));
    child.stdout.pipe(file, { end: false });
    child.stderr.pipe(file, { end: false });
    child.once("close", () => file.end());
  }
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`wrangler dev (${config}) exited:\n${log}`);
    }
    try {
      await fetch(`${url}/v1/health`);
      return { url, stop, inspectorPort };
    } catch {
      await sleep(250);
    }
  }
  child.kill("SIGKILL");
  await stop();
  throw new Error(`wrangler dev (${config}) did not start in 60 s:\n${log}`);
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGINT");
  for (let i = 0; i < 40 && child.exitCode === null && child.signalCode === null; i++) await sleep(100);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

/**
 * Requests wrangler's local proxy dropped and `call` sent again. Its ProxyWorker answers a forward
 * that failed ("Connection reset by peer" / "Network connection lost" between the proxy and the
 * Worker's runtime) with 503 "Your worker restarted mid-request" and Retry-After: 0 whatever the
 * cause (see the comment at the top), and retries only GET and HEAD itself. Such a request most
 * often never reached the Worker, so the bench sends it again (at most 3 times) rather than fail a
 * 2-minute run on one dropped request; every run reports how many it resent (`proxyRetries`), so a
 * figure it touched can be told. A resent claim that had reached the Worker leaves its jobs leased
 * until their lease expires; a resent complete then answers already_terminal, taken as done.
 */
export const proxy = { retries: 0 };
const PROXY_DROPPED = /Your worker restarted mid-request/;

export async function call(url, method, path, body, token = TOKEN) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status === 503 && PROXY_DROPPED.test(text) && attempt < 3) {
      proxy.retries++;
      continue;
    }
    // A complete resent after the proxy dropped its answer finds the job completed by the first.
    if (attempt > 0 && res.status === 409 && /already_terminal/.test(text) && path.endsWith("/complete")) return null;
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  }
}

/** rate runs `fn(i)` for i in [0, n) with `concurrency` in flight; returns operations per second. */
export async function rate(n, concurrency, fn) {
  // A fractional n would run ceil(n) calls and credit n.
  if (!Number.isInteger(n)) throw new Error(`rate: n must be a whole number of calls, got ${n}`);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const round = (x, digits = 3) => Number(x.toFixed(digits));

/**
 * startQueue: the shipped wrangler.toml plus the example handler in a wrangler dev of its own (startWorker), once its
 * handler is connected (handlerConnected); stopped again if it never is, so no wrangler dev outlives the run.
 */
export async function startQueue({ cwd, persistTo, vars = {} }) {
  const w = await startWorker({ cwd, config: ["wrangler.toml", "examples/handler/wrangler.toml"], persistTo, vars: { QUEUE_TOKEN: TOKEN, ...vars } });
  try {
    await handlerConnected(w.url);
  } catch (e) {
    await w.stop();
    throw e;
  }
  return w;
}

/**
 * handlerConnected: wrangler dev reloads the coordinator once the example handler
 * registers (its service binding goes from "not connected" to "connected"), which
 * fails requests in flight. Wait until a pushed job completes before measuring.
 */
export async function handlerConnected(url) {
  for (let i = 0; i < 100; i++) {
    try {
      const { job } = await call(url, "POST", "/v1/jobs", { type: "demo.echo", payload: {}, scope: { type: "Bench", id: "warmup" } });
      for (let k = 0; k < 20; k++) {
        if ((await call(url, "GET", `/v1/jobs/${job.id}`)).job.state === "completed") return;
        await sleep(100);
      }
    } catch {
      // restarted mid-request: try again
    }
    await sleep(200);
  }
  throw new Error("the example handler never answered");
}

/**
 * fill enqueues n jobs, `make(i)` each, in POST /v1/jobs/batch calls of at most
 * 1,000 (the API's limit), `inFlight` calls at a time; returns jobs/s. `path`: the
 * bare baseline's /insert-batch takes the same bodies.
 */
export async function fill(url, n, make, inFlight = 1, path = "/v1/jobs/batch") {
  const t0 = performance.now();
  await rate(Math.ceil(n / 1000), inFlight, (c) =>
    call(url, "POST", path, { jobs: Array.from({ length: Math.min(1000, n - c * 1000) }, (_, k) => make(c * 1000 + k)) }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/**
 * fillPerScope enqueues n jobs, `make(i)` each, job i to scope i % scopes, as each tenant would: a batch of its
 * own jobs (at most 1,000), 8 calls in flight. A batch spanning objects is staged first (all or none), which
 * about halves such a fill (docs/design.md, Batches over several objects); the scopes sweep measures the drain.
 */
export async function fillPerScope(url, n, scopes, make) {
  const calls = [];
  for (let s = 0; s < scopes; s++) {
    const mine = [];
    for (let i = s; i < n; i += scopes) mine.push(make(i));
    for (let c = 0; c < mine.length; c += 1000) calls.push(mine.slice(c, c + 1000));
  }
  await rate(calls.length, 8, (k) => call(url, "POST", "/v1/jobs/batch", { jobs: calls[k] }));
}

/** pullStep: one pull worker step — claim one job of `type` and complete it; returns how many it completed (0 or 1). */
export async function pullStep(url, type) {
  const { jobs } = await call(url, "POST", "/v1/claim", { worker: "bench", types: [type] });
  for (const j of jobs) await call(url, "POST", `/v1/jobs/${j.id}/complete`, { leaseToken: j.leaseToken });
  return jobs.length;
}

/**
 * pushDrain enqueues n jobs of a pushed type (spread over `scopes` scopes of
 * `scopeType`, or unscoped when scopes is 0), waits until the queue has
 * finished them, and returns jobs/s from the first enqueue to the last
 * `finishedAt`. The jobs carry a tag of their own, so the timing reads only them.
 */
export async function pushDrain(url, { type, n, scopes = 0, scopeType = "Bench", payload = {}, payloadOf = null }) {
  const tag = `drain-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const before = (await call(url, "GET", `/v1/stats?type=${type}`)).completed;
  const t0 = Date.now();
  const job = (i) => ({ type, payload: payloadOf ? payloadOf(i) : payload, tags: [tag], ...(scopes ? { scope: { type: scopeType, id: `s${i % scopes}` } } : {}) });
  if (scopes > 0) await fillPerScope(url, n, scopes, job);
  else await fill(url, n, job);
  // Stats come from the catalog (up to a second behind): wait for the completions, not only for an idle type.
  await until(`${type} drain`, async () => {
    const s = await call(url, "GET", `/v1/stats?type=${type}`);
    return s.completed >= before + n && s.pending + s.running + s.scheduled === 0;
  });
  const done = await listAll(url, { type, tag, state: "completed" });
  if (done.length !== n) throw new Error(`${type} drain: ${done.length} of ${n} jobs completed`);
  return n / ((Math.max(...done.map((j) => j.finishedAt)) - t0) / 1000);
}

/**
 * cfqDrain: Cloudflare Queues on the same local runtime (bench/cfq): n messages sent in requests of 1,000
 * (the Worker sends them 100 a sendBatch), consumed by a no-op consumer in batches of up to 100; messages/s
 * from the first send to the last batch consumed — the same span pushDrain times.
 */
export async function cfqDrain(url, n) {
  const before = (await call(url, "GET", "/stats")).consumed;
  const t0 = Date.now();
  for (let c = 0; c < n; c += 1000) await call(url, "POST", "/send", { messages: Array.from({ length: Math.min(1000, n - c) }, (_, k) => ({ i: c + k })) });
  const s = await until("cf queues drain", async () => {
    const s = await call(url, "GET", "/stats");
    return s.consumed >= before + n ? s : null;
  });
  return n / ((s.lastAt - t0) / 1000);
}

/** completedJob polls a job until it is completed. */
export function completedJob(url, id, timeoutMs = undefined) {
  return until(
    `job ${id}`,
    async () => {
      const j = (await call(url, "GET", `/v1/jobs/${id}`)).job;
      return j.state === "completed" ? j : null;
    },
    timeoutMs,
  );
}

/** until polls `test` every 50 ms until it returns something truthy. */
export async function until(what, test, timeoutMs = 120_000) {
  const t0 = Date.now();
  for (;;) {
    const v = await test();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** percentile (nearest rank) of a list of numbers. */
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** listAll pages through GET /v1/jobs with the given filters. */
export async function listAll(url, query) {
  const items = [];
  let cursor = null;
  do {
    const q = new URLSearchParams({ ...query, limit: "500", ...(cursor ? { cursor } : {}) });
    const page = await call(url, "GET", `/v1/jobs?${q}`);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

export function machine() {
  const cpus = os.cpus();
  const pkg = JSON.parse(readFileSync(new URL("../node_modules/wrangler/package.json", import.meta.url), "utf8"));
  return {
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    wrangler: pkg.version,
  };
}
