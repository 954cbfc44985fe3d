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
  const child = spawn("node_modules/.bin/wrangler", args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
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
