// Shared pieces of the benchmark scripts: starting wrangler dev, HTTP calls, timing, machine facts.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";

export const TOKEN = "bench-token";

/** startWorker runs `wrangler dev` for one config on its own port and state dir; resolves once it answers. */
export async function startWorker({ config, port, persistTo, vars = {} }) {
  const configs = (Array.isArray(config) ? config : [config]).flatMap((c) => ["-c", c]);
  const args = ["dev", ...configs, "--port", String(port), "--ip", "127.0.0.1", "--persist-to", persistTo, "--log-level", "error"];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child = spawn(process.execPath, ["node_modules/wrangler/bin/wrangler.js", ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
  // Keep the tail only: a long run logs a line per lifecycle event.
  let log = "";
  const keep = (d) => (log = (log + d).slice(-20_000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`wrangler dev (${config}) exited:\n${log}`);
    try {
      await fetch(`${url}/v1/health`);
      return { url, stop: () => stopChild(child) };
    } catch {
      await sleep(250);
    }
  }
  child.kill("SIGKILL");
  throw new Error(`wrangler dev (${config}) did not start in 60 s:\n${log}`);
}

async function stopChild(child) {
  if (child.exitCode !== null) return;
  child.kill("SIGINT");
  for (let i = 0; i < 40 && child.exitCode === null; i++) await sleep(100);
  if (child.exitCode === null) child.kill("SIGKILL");
}

export async function call(url, method, path, body, token = TOKEN) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
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
 * 1,000 (the API's limit), `inFlight` calls at a time; returns jobs/s.
 */
export async function fill(url, n, make, inFlight = 1) {
  const t0 = performance.now();
  await rate(Math.ceil(n / 1000), inFlight, (c) =>
    call(url, "POST", "/v1/jobs/batch", { jobs: Array.from({ length: Math.min(1000, n - c * 1000) }, (_, k) => make(c * 1000 + k)) }),
  );
  return n / ((performance.now() - t0) / 1000);
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
export async function pushDrain(url, { type, n, scopes = 0, scopeType = "Bench", payload = {} }) {
  const tag = `drain-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const before = (await call(url, "GET", `/v1/stats?type=${type}`)).completed;
  const t0 = Date.now();
  await fill(url, n, (i) => ({ type, payload, tags: [tag], ...(scopes ? { scope: { type: scopeType, id: `s${i % scopes}` } } : {}) }));
  // Stats come from the catalog (up to a second behind): wait for the completions, not only for an idle type.
  await until(`${type} drain`, async () => {
    const s = await call(url, "GET", `/v1/stats?type=${type}`);
    return s.completed >= before + n && s.pending + s.running + s.scheduled === 0;
  });
  const done = await listAll(url, { type, tag, state: "completed" });
  if (done.length !== n) throw new Error(`${type} drain: ${done.length} of ${n} jobs completed`);
  return n / ((Math.max(...done.map((j) => j.finishedAt)) - t0) / 1000);
}

/** completedJob polls a job until it is completed. */
export function completedJob(url, id) {
  return until(`job ${id}`, async () => {
    const j = (await call(url, "GET", `/v1/jobs/${id}`)).job;
    return j.state === "completed" ? j : null;
  });
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
