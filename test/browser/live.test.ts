/**
 * Following a job live from a browser page on another origin (docs/http-api.md "Live subscriptions"): the example
 * backend (examples/live) enqueues demo.progress and mints a subscription URL; the page, served from the backend's
 * origin, opens it on the queue's origin as a WebSocket with no token and shows the progress bar to 100. The
 * client's watchJob runs in the same page (a real browser WebSocket) and in Node (Server-Sent Events: Node 20 has
 * no WebSocket).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import ts from "typescript";
import { afterAll, beforeAll, expect, test } from "vitest";
import { watchJob } from "../../src/client/subscribe";
import { launchBrowser, type Queue, screenshot, startQueue, startWorker, type Worker } from "./harness";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let queue: Queue | undefined;
let live: Worker | undefined;
let browser: Browser | undefined;
const registryDir = mkdtempSync(path.join(tmpdir(), "edgequeue-live-registry-"));

beforeAll(async () => {
  browser = await launchBrowser();
  queue = await startQueue({ registryDir });
  live = await startWorker({ cwd: ROOT, config: "examples/live/wrangler.toml", registryDir, vars: { QUEUE_PUBLIC_URL: queue.url } });
});

afterAll(async () => {
  await browser?.close();
  await live?.stop();
  await queue?.stop();
  rmSync(registryDir, { recursive: true, force: true });
});

test("the example page on its own origin follows demo.progress to 100 without the queue's token", async () => {
  expect(new URL(live!.url).origin).not.toBe(new URL(queue!.url).origin);
  const page = await browser!.newPage();
  const toQueue: { url: string; authorization: string | undefined }[] = [];
  page.on("request", (r) => {
    if (r.url().startsWith(queue!.url.replace(/^http/, "ws")) || r.url().startsWith(queue!.url)) toQueue.push({ url: r.url(), authorization: r.headers().authorization });
  });
  const sockets: string[] = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  await page.goto(live!.url);
  await page.click("#start");
  await page.waitForFunction(() => document.getElementById("status")!.textContent!.startsWith("done"), undefined, { timeout: 30_000 });
  expect(await page.locator("#bar").evaluate((b) => (b as HTMLProgressElement).value)).toBe(100);
  expect(await page.locator("#status").innerText()).toBe('done: {"done":true}');
  await screenshot(page, "live-progress");
  // The page reached the queue only through its subscription URL, over a WebSocket, and never with a token.
  expect(sockets).toHaveLength(1);
  expect(sockets[0]).toMatch(new RegExp(`^${queue!.url.replace(/^http/, "ws").replace(/[.:/]/g, "\\$&")}/v1/subscriptions/`));
  expect(toQueue.every((r) => r.authorization === undefined)).toBe(true);
  expect(await page.content()).not.toContain(queue!.token);
  await page.close();
});

test("the client's watchJob follows a job in the browser (WebSocket) and in Node (Server-Sent Events)", async () => {
  const page = await browser!.newPage();
  await page.goto(live!.url);
  // The client module as it ships (type-only imports: its JavaScript is the TypeScript without types).
  const source = ts.transpileModule(readFileSync(path.join(ROOT, "src/client/subscribe.ts"), "utf8"), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  await page.addScriptTag({ type: "module", content: `${source}\nwindow.edgequeueClient = { watchJob };` });
  await page.waitForFunction(() => "edgequeueClient" in window);
  const inBrowser = await page.evaluate(async () => {
    const { url } = await (await fetch("/start", { method: "POST" })).json();
    const progress: number[] = [];
    const job = await (window as any).edgequeueClient.watchJob(url, { progress: (p: number) => progress.push(p) });
    return { state: job.state, result: job.result, last: progress.at(-1) };
  });
  expect(inBrowser).toEqual({ state: "completed", result: { done: true }, last: 100 });
  await page.close();

  const headers = { authorization: `Bearer ${queue!.token}`, "content-type": "application/json" };
  const { job } = await (await fetch(`${queue!.url}/v1/jobs`, { method: "POST", headers, body: JSON.stringify({ type: "demo.progress", payload: { steps: 3, ms: 100 } }) })).json();
  const { url } = await (await fetch(`${queue!.url}/v1/subscriptions`, { method: "POST", headers, body: JSON.stringify({ jobId: job.id }) })).json();
  expect(url.startsWith(queue!.url)).toBe(true);
  expect((globalThis as { WebSocket?: unknown }).WebSocket).toBeUndefined();
  const seen: unknown[] = [];
  const done = await watchJob(url, { progress: (p) => seen.push(p) });
  expect(done).toMatchObject({ id: job.id, state: "completed", progress: 100 });
  expect(seen.at(-1)).toBe(100);
});
