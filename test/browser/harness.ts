/**
 * Harness for the real-browser tests (vitest project "browser", plain Node):
 *
 * - startQueue() runs the queue the way `npm start` does — `wrangler dev` with the coordinator and
 *   the example handler Worker in one session — on free ports, with a fresh state dir and a known
 *   QUEUE_TOKEN, and resolves once the API answers and the example handler is connected.
 * - launchBrowser() starts the system Chromium (Debian package `chromium`) under playwright-core.
 * - screenshot() saves a full-page PNG under test-artifacts/screenshots/ (git-ignored).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** wrangler's own entry, run by this Node: no .bin shim (Windows refuses to spawn a .cmd without a shell). */
const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
/** Where screenshot() writes; test-artifacts/ is git-ignored. */
export const SCREENSHOTS = path.join(ROOT, "test-artifacts", "screenshots");

export interface Queue {
  /** Base URL of the coordinator, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** The QUEUE_TOKEN the coordinator accepts (`authorization: Bearer <token>`). */
  token: string;
  /** Stops wrangler dev (its whole process group) and deletes the state dir. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartQueueOptions {
  /** QUEUE_TOKEN to run with; defaults to "browser-test-token". */
  token?: string;
  /** How long to wait for the queue to answer with the handler connected (default 150 s). */
  timeoutMs?: number;
}

/**
 * startQueue runs `wrangler dev -c wrangler.toml -c examples/handler/wrangler.toml` (what
 * `npm start` runs) on a free port and inspector port, persisting to a new temp dir, with
 * `--var QUEUE_TOKEN:<token>` (overrides .dev.vars). It resolves once GET /v1/health answers 200
 * and a pushed demo.echo job has completed: wrangler dev reloads the coordinator when the
 * handler Worker connects, which fails requests in flight (bench/lib.mjs handlerConnected).
 * If wrangler exits or the queue never gets ready, it throws with the tail of wrangler's output.
 */
export async function startQueue(options: StartQueueOptions = {}): Promise<Queue> {
  const token = options.token ?? "browser-test-token";
  const deadline = Date.now() + (options.timeoutMs ?? 150_000);
  const [port, inspectorPort] = await freePorts(2);
  const dir = mkdtempSync(path.join(tmpdir(), "edgequeue-browser-"));
  const args = [
    "dev",
    "-c", "wrangler.toml",
    "-c", "examples/handler/wrangler.toml",
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-port", String(inspectorPort),
    "--persist-to", path.join(dir, "state"),
    "--var", `QUEUE_TOKEN:${token}`,
    "--show-interactive-dev-session=false",
  ];
  const child = spawn(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    // Own process group, so stop() also ends the workerd processes wrangler starts.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      // A dev registry of its own: another `npm start` (or a second queue) must not see or bind these Workers.
      WRANGLER_REGISTRY_PATH: path.join(dir, "registry"),
    },
  });
  // Keep the tail only: wrangler logs a line per request.
  let log = "";
  const keep = (d: Buffer) => (log = (log + d.toString()).slice(-20_000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  let spawnError: Error | undefined;
  child.on("error", (e) => (spawnError = e));
  track(child, dir);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopGroup(child);
    untrack(child);
    rmSync(dir, { recursive: true, force: true });
  };

  const url = `http://127.0.0.1:${port}`;
  const fail = async (why: string) => {
    await stop();
    return new Error(`startQueue: ${why}\nwrangler ${args.join(" ")}\n--- wrangler output (tail) ---\n${log}`);
  };
  const exited = () => spawnError !== undefined || child.exitCode !== null || child.signalCode !== null;
  const exitReason = () => (spawnError ? `could not run ${WRANGLER}: ${spawnError.message}` : `wrangler dev exited (code ${child.exitCode}, signal ${child.signalCode})`);

  // 1. The API answers.
  for (;;) {
    if (exited()) throw await fail(exitReason());
    if (Date.now() > deadline) throw await fail(`GET ${url}/v1/health did not answer 200 in time`);
    try {
      const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }

  // 2. The example handler is connected: a pushed job completes.
  for (;;) {
    if (exited()) throw await fail(exitReason());
    if (Date.now() > deadline) throw await fail("the example handler never completed a demo.echo job");
    try {
      const { job } = await api<{ job: { id: string } }>(url, token, "POST", "/v1/jobs", {
        type: "demo.echo",
        payload: {},
        scope: { type: "BrowserHarness", id: "warmup" },
      });
      for (let k = 0; k < 30; k++) {
        const { job: now } = await api<{ job: { state: string } }>(url, token, "GET", `/v1/jobs/${job.id}`);
        if (now.state === "completed") return { url, token, stop };
        await sleep(100);
      }
    } catch (e) {
      // A wrong token is not a restart: say so instead of waiting out the deadline.
      if (e instanceof ApiError && e.status === 401) throw await fail(`the coordinator rejected QUEUE_TOKEN ${JSON.stringify(token)}: ${e.message}`);
      // otherwise restarted mid-request: try again
    }
    await sleep(200);
  }
}

class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function api<T>(url: string, token: string, method: string, pathname: string, body?: unknown): Promise<T> {
  const res = await fetch(url + pathname, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new ApiError(`${method} ${pathname} → ${res.status}: ${text.slice(0, 300)}`, res.status);
  return JSON.parse(text) as T;
}

/** n distinct ports free on 127.0.0.1 right now (held together while choosing, so they differ). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const s = createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === "string") throw new Error("freePorts: no TCP address");
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/*
 * wrangler runs in a process group of its own, so a Ctrl-C or vitest ending the test worker
 * (SIGTERM) does not reach it: until stop(), each live queue is killed if this process ends.
 */
const live = new Map<ChildProcess, string>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function killLive(): void {
  for (const [child, dir] of live) {
    killGroup(child, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killLive();
  unhook();
  // Then die of the signal as the process would have without this listener.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function hook(): void {
  process.on("exit", killLive);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function unhook(): void {
  process.off("exit", killLive);
  for (const s of SIGNALS) process.off(s, onSignal);
}

function track(child: ChildProcess, dir: string): void {
  if (live.size === 0) hook();
  live.set(child, dir);
}

function untrack(child: ChildProcess): void {
  if (live.delete(child) && live.size === 0) unhook();
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

/** SIGINT to wrangler's process group (it shuts workerd down), SIGKILL to whatever is left after 5 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    const exit = new Promise((resolve) => child.once("exit", resolve));
    killGroup(child, "SIGINT");
    await Promise.race([exit, sleep(5_000)]);
  }
  // Anything still in the group (workerd outliving wrangler) goes too.
  killGroup(child, "SIGKILL");
}

/**
 * launchBrowser starts headless Chromium with playwright-core: CHROMIUM_PATH if set, else
 * /usr/bin/chromium (Debian's `chromium` package). No Chromium is an error, never a skip.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  if (!existsSync(executablePath)) {
    throw new Error(
      `launchBrowser: no Chromium at ${executablePath}. Install it (apt-get install chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary.`,
    );
  }
  return chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
}

/** screenshot writes a full-page PNG to test-artifacts/screenshots/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const file = path.resolve(SCREENSHOTS, `${name}.png`);
  if (!file.startsWith(SCREENSHOTS + path.sep)) throw new Error(`screenshot: name ${JSON.stringify(name)} leaves ${SCREENSHOTS}`);
  mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
