/**
 * Harness for the real-browser tests (vitest project "browser", plain Node):
 *
 * - startQueue() runs the queue the way `npm start` does — `wrangler dev` with the coordinator and
 *   the example handler Worker in one session — on free ports, with a fresh state dir and a known
 *   QUEUE_TOKEN, and resolves once the API answers and the example handler is connected.
 * - launchBrowser() starts headless Chromium under playwright-core: CHROMIUM_PATH, else the one the npm
 *   package @sparticuz/chromium ships (so `npm install` is enough; no system Chromium).
 * - screenshot() saves a full-page PNG under test-artifacts/screenshots/ (git-ignored).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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
  /** The tail of wrangler's output (the Workers' console lines among it). */
  log(): string;
}

export interface StartQueueOptions {
  /** QUEUE_TOKEN to run with; defaults to "browser-test-token". */
  token?: string;
  /** How long to wait for the queue to answer with the handler connected (default 150 s). */
  timeoutMs?: number;
  /** The -c configs, the queue's first (default: the coordinator and the example handler, as `npm start`). */
  configs?: string[];
  /** false: resolve once the API answers, without waiting for the example handler (it may not be run). */
  waitForHandler?: boolean;
  /** State to persist to and keep after stop() (a restart passes the same dir); default: a temp dir removed at stop(). */
  stateDir?: string;
  /** A dev registry to share with other sessions (startWorker); default: one of its own, removed at stop(). */
  registryDir?: string;
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
  const session = await startSession({
    configs: options.configs ?? ["wrangler.toml", "examples/handler/wrangler.toml"],
    extraArgs: ["--var", `QUEUE_TOKEN:${token}`],
    stateDir: options.stateDir,
    registryDir: options.registryDir,
  });
  const { url, stop, fail, exited, exitReason } = session;

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
  if (options.waitForHandler === false) return { url, token, stop, log: session.log };

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
        if (now.state === "completed") return { url, token, stop, log: session.log };
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

export interface Worker {
  url: string;
  /** The tail of the session's output (wrangler and the Workers' console lines). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * startWorker runs `wrangler dev -c <config>` (or, with npmDev, the project's own `npm run dev`) for a
 * Worker project of a user's own (a producer, a handler, a queue `edgequeue init` wrote) in `cwd`, on a free port, sharing `registryDir` with the queue's session so their
 * service bindings connect (wrangler's local dev registry); resolves once it answers HTTP at all.
 */
export async function startWorker(options: { cwd: string; config?: string; registryDir: string; timeoutMs?: number; npmDev?: boolean; vars?: Record<string, string> }): Promise<Worker> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const extraArgs = Object.entries(options.vars ?? {}).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const session = await startSession({ configs: options.config ? [options.config] : [], cwd: options.cwd, registryDir: options.registryDir, npmDev: options.npmDev, extraArgs });
  for (;;) {
    if (session.exited()) throw await session.fail(session.exitReason());
    if (Date.now() > deadline) throw await session.fail(`${session.url} did not answer in time`);
    try {
      const res = await fetch(session.url, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      return { url: session.url, log: session.log, stop: session.stop };
    } catch {
      await sleep(250);
    }
  }
}

interface Session {
  url: string;
  log(): string;
  stop(): Promise<void>;
  fail(why: string): Promise<Error>;
  exited(): boolean;
  exitReason(): string;
}

/**
 * startSession spawns one `wrangler dev` in its own process group on a free port and inspector
 * port, with a dev registry and state of its own unless given (another `npm start` must not see or
 * bind these Workers: bench/lib.mjs says how the registry is shared otherwise).
 */
async function startSession(o: { configs: string[]; cwd?: string; extraArgs?: string[]; stateDir?: string; registryDir?: string; npmDev?: boolean }): Promise<Session> {
  const [port, inspectorPort] = await freePorts(2);
  const dir = mkdtempSync(path.join(tmpdir(), "edgequeue-session-"));
  const args = [
    ...(o.npmDev ? [] : ["dev"]),
    ...o.configs.flatMap((c) => ["-c", c]),
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-port", String(inspectorPort),
    "--persist-to", o.stateDir ?? path.join(dir, "state"),
    ...(o.extraArgs ?? []),
    "--show-interactive-dev-session=false",
  ];
  // npmDev: the project's own `npm run dev` (its own wrangler and scripts), the flags passed through.
  const [command, argv]: [string, string[]] = o.npmDev ? ["npm", ["run", "dev", "--", ...args]] : [process.execPath, [WRANGLER, ...args]];
  const child = spawn(command, argv, {
    cwd: o.cwd ?? ROOT,
    // Own process group, so stop() also ends the workerd processes wrangler starts.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_REGISTRY_PATH: o.registryDir ?? path.join(dir, "registry") },
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
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => log,
    stop,
    fail: async (why: string) => {
      await stop();
      return new Error(`wrangler dev: ${why}\nwrangler ${args.join(" ")}\n--- wrangler output (tail) ---\n${log}`);
    },
    exited: () => spawnError !== undefined || child.exitCode !== null || child.signalCode !== null,
    exitReason: () => (spawnError ? `could not run ${WRANGLER}: ${spawnError.message}` : `wrangler dev exited (code ${child.exitCode}, signal ${child.signalCode})`),
  };
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
 * launchBrowser starts headless Chromium with playwright-core: CHROMIUM_PATH if set (any Chromium or
 * Chrome binary), else the headless Chromium the npm package @sparticuz/chromium ships (a
 * devDependency, so `npm install` is all the browser tests need: no apt, no download). No Chromium is
 * an error, never a skip.
 */
export async function launchBrowser(): Promise<Browser> {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`launchBrowser: CHROMIUM_PATH=${fromEnv} does not exist. Unset it to use the Chromium of @sparticuz/chromium, or point it at a Chromium or Chrome binary.`);
    // --no-sandbox: CI and containers run as root, where Chromium's sandbox refuses to start.
    return chromium.launch({ executablePath: fromEnv, headless: true, args: ["--no-sandbox"] });
  }
  const { executablePath, args } = await bundledChromium();
  return chromium.launch({ executablePath, headless: true, args });
}

/**
 * Flags of @sparticuz/chromium's recommended list (its `args`, made for AWS Lambda) that these tests
 * must not run with:
 * - --disable-web-security, --allow-running-insecure-content: they turn off the same-origin policy
 *   and mixed-content blocking. The dashboard must be tested in a browser that enforces what its
 *   users' browsers do (the sign-in cookie, CSRF form tokens, its Content-Security-Policy);
 * - --single-process: Lambda needs it (no prctl there), nothing else does, and it breaks these tests:
 *   with it, closing a page while a page of another context is open closes the whole browser
 *   ("Target page, context or browser has been closed" on the next call; Chromium 147 of
 *   @sparticuz/chromium 147.0.0) — what dashboard.test.ts does with its fresh sign-in page;
 * - --headless='shell': playwright passes --headless itself (the binary is headless-shell anyway).
 * The rest (--no-sandbox, --no-zygote and --disable-setuid-sandbox for root in containers, SwiftShader
 * for GL, no pings or print preview, no out-of-process iframes) are kept.
 */
const DROPPED_FLAGS = ["--disable-web-security", "--allow-running-insecure-content", "--single-process", "--headless"];

/**
 * The Chromium of @sparticuz/chromium: executablePath() decompresses it (with its fonts and SwiftShader)
 * into os.tmpdir() on first use (~1 s) and returns <tmpdir>/chromium. It only checks that the file
 * exists, so two test files launching at once could run a binary still being written, and an
 * extraction killed halfway would leave a truncated one for good: the extraction runs under a lock
 * (a directory, made atomically) shared by every process, and a marker file written after it says the
 * binary is whole; a binary without the marker is removed and extracted again.
 */
async function bundledChromium(): Promise<{ executablePath: string; args: string[] }> {
  const { default: sparticuz } = await import("@sparticuz/chromium");
  const args = sparticuz.args.filter((a) => !DROPPED_FLAGS.some((f) => a === f || a.startsWith(`${f}=`)));
  const binary = path.join(tmpdir(), "chromium");
  const marker = path.join(tmpdir(), "chromium.edgequeue-complete");
  const executablePath = await withLock(path.join(tmpdir(), "chromium.edgequeue-lock"), async () => {
    const whole = () => existsSync(marker) && existsSync(binary) && readFileSync(marker, "utf8") === String(statSync(binary).size);
    if (!whole()) {
      rmSync(binary, { force: true });
      const extracted = await sparticuz.executablePath();
      writeFileSync(marker, String(statSync(extracted).size));
      return extracted;
    }
    return binary;
  });
  return { executablePath, args };
}

/** withLock runs fn while holding `dir` (mkdir is atomic across processes); a lock older than 2 min is a dead holder's. */
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  for (const deadline = Date.now() + 180_000; ; ) {
    try {
      mkdirSync(dir);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      if (Date.now() > deadline) throw new Error(`launchBrowser: ${dir} is still held; remove it if no test is running`);
      try {
        if (Date.now() - statSync(dir).mtimeMs > 120_000) rmSync(dir, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** screenshot writes a full-page PNG to test-artifacts/screenshots/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const file = path.resolve(SCREENSHOTS, `${name}.png`);
  if (!file.startsWith(SCREENSHOTS + path.sep)) throw new Error(`screenshot: name ${JSON.stringify(name)} leaves ${SCREENSHOTS}`);
  mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
