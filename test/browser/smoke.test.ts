// The browser harness end to end: wrangler dev as `npm start` runs it, driven by headless Chromium.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { launchBrowser, type Queue, screenshot, startQueue } from "./harness";

let queue: Queue | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  browser = await launchBrowser(); // first: no Chromium fails fast
  queue = await startQueue();
});

afterAll(async () => {
  await browser?.close();
  await queue?.stop();
});

test("Chromium opens /v1/health on the running queue", async () => {
  const page = await browser!.newPage();
  const res = await page.goto(`${queue!.url}/v1/health`);
  expect(res?.status()).toBe(200);
  // Chromium shows a JSON response as text in the page.
  expect(await page.locator("body").innerText()).toContain('"ok":true');
  const file = await screenshot(page, "smoke-health");
  expect(file).toMatch(/test-artifacts[/\\]screenshots[/\\]smoke-health\.png$/);
  await page.close();
});

test("the queue accepts the harness token and only it", async () => {
  const get = (token: string) => fetch(`${queue!.url}/v1/stats`, { headers: { authorization: `Bearer ${token}` } });
  const ok = await get(queue!.token);
  expect(ok.status, await ok.text()).toBe(200);
  const wrong = await get(`${queue!.token}-wrong`);
  await wrong.arrayBuffer();
  expect(wrong.status).toBe(401);
});
