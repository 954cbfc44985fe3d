// The dashboard in a real browser (headless Chromium) against the queue as `npm start` runs it:
// sign in, find a job you enqueued, retry a failed one and cancel a pending one from their pages,
// watch counts change without a reload, and the refusals a browser can provoke. Screenshots of
// every page land in test-artifacts/screenshots/.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { run } from "../../src/cli/index";
import { launchBrowser, type Queue, screenshot, startQueue } from "./harness";

let queue: Queue;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Any alert() a payload manages to run fails the suite. */
const dialogs: string[] = [];

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(queue.url + path, {
    method,
    headers: { authorization: `Bearer ${queue.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return JSON.parse(text);
}

/** The `edgequeue` CLI (src/cli/index.ts run) against this queue, as a person runs it. */
async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run({ argv: ["--url", queue.url, "--token", queue.token, ...argv], env: {}, cwd: process.cwd(), out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const DEAD_EVENT = "order-42-paid";

/** A pull-only job type of this run: its jobs stay where the test puts them. */
const PULLED = `browser.pulled.${Date.now().toString(36)}`;

async function failedJob(): Promise<string> {
  // A type of its own: the claim below must lease this job, not another pending one.
  const type = `${PULLED}.failing`;
  const { job } = await api("POST", "/v1/jobs", { type, payload: { will: "fail" } });
  const { jobs } = await api("POST", "/v1/claim", { worker: "browser-test", types: [type], limit: 1 });
  expect(jobs[0].id).toBe(job.id);
  await api("POST", `/v1/jobs/${job.id}/fail`, { leaseToken: jobs[0].leaseToken, error: "upstream said 503", fatal: true });
  return job.id;
}

async function signIn(p: Page): Promise<void> {
  await p.goto(`${queue.url}/dashboard`);
  await expect.poll(() => p.url()).toContain("/dashboard/login");
  await p.fill('input[name="token"]', queue.token);
  await p.click('button[type="submit"]');
  await p.waitForURL(`${queue.url}/dashboard`);
}

beforeAll(async () => {
  queue = await startQueue();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  // Some history for the chart and tables: completions, failures, a retry in flight, a schedule.
  await api("POST", "/v1/jobs/batch", {
    jobs: [
      ...Array.from({ length: 12 }, (_, i) => ({ type: "demo.echo", payload: { i }, scope: { type: "Account", id: `acme-${i % 3}` } })),
      ...Array.from({ length: 3 }, () => ({ type: "demo.fatal", payload: {} })),
      { type: "demo.flaky", payload: { failTimes: 1 } },
    ],
  });
  await api("PUT", "/v1/schedules/nightly-report", { type: "demo.noop", cron: "0 3 * * *" });
  // demo.consumer.bad fails every delivery: this event's lands in the topic's quarantine.
  await api("POST", "/v1/topics/demo.topic/events", { id: DEAD_EVENT, payload: { order: 42 } });
});

afterAll(async () => {
  await browser?.close();
  await queue?.stop();
});

describe("dashboard in Chromium", () => {
  test("sign-in is required, and the token gets you in", async () => {
    const fresh = await browser.newPage();
    await fresh.goto(`${queue.url}/dashboard/jobs`);
    expect(fresh.url()).toBe(`${queue.url}/dashboard/login?next=%2Fdashboard%2Fjobs`);
    await fresh.fill('input[name="token"]', "wrong-token");
    await fresh.click('button[type="submit"]');
    await expect.poll(() => fresh.locator('[role="alert"]').innerText()).toContain("not one of the queue's tokens");
    await screenshot(fresh, "login");
    await fresh.close();

    await signIn(page);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === "edgequeue_session")).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict" });
    // The session cookie is not readable from page scripts.
    expect(await page.evaluate(() => document.cookie)).not.toContain("edgequeue_session");
  });

  test("a job you enqueued is listed, and its payload renders as text", async () => {
    const { job } = await api("POST", "/v1/jobs", { type: PULLED, payload: { note: "<script>alert('xss')</script><img src=x onerror=alert(2)>" }, tags: ["browser"] });
    await page.goto(`${queue.url}/dashboard/jobs?type=${encodeURIComponent(PULLED)}`);
    const row = page.locator(`tr[data-job-id="${job.id}"]`);
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.innerText()).toContain("pending");
    await screenshot(page, "jobs");
    await row.locator("a").first().click();
    await page.waitForURL(`**/dashboard/jobs/${encodeURIComponent(job.id)}`);
    expect(await page.locator("#payload").innerText()).toContain("<script>alert('xss')</script><img src=x onerror=alert(2)>");
    expect(await page.locator("#payload script, #payload img").count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  test("cancel a pending job from its page", async () => {
    const { job } = await api("POST", "/v1/jobs", { type: PULLED, payload: { cancel: "me" } });
    await page.goto(`${queue.url}/dashboard/jobs/${encodeURIComponent(job.id)}`);
    await page.click('form[action$="/cancel"] button');
    await expect.poll(() => page.locator('[role="status"]').innerText()).toContain("Cancelled");
    expect(await page.locator(".facts .chip").first().innerText()).toBe("cancelled");
    expect((await api("GET", `/v1/jobs/${job.id}`)).job).toMatchObject({ state: "cancelled", cancelReason: "cancelled from the dashboard" });
  });

  test("retry a failed job from its page; its timeline shows why", async () => {
    const id = await failedJob();
    await page.goto(`${queue.url}/dashboard/jobs/${encodeURIComponent(id)}`);
    expect(await page.locator(".facts .chip").first().innerText()).toBe("failed");
    expect(await page.locator("table").last().innerText()).toContain("fatal: upstream said 503");
    await page.click('form[action$="/retry"] button');
    await expect.poll(() => page.locator('[role="status"]').innerText()).toContain("Sent back to pending");
    expect(await page.locator("table").last().innerText()).toContain("manual retry");
    expect((await api("GET", `/v1/jobs/${id}`)).job).toMatchObject({ state: "pending", attempts: 0 });
    await screenshot(page, "job");
  });

  test("counts update without a reload", async () => {
    const type = `${PULLED}.counted`;
    await api("POST", "/v1/jobs", { type, payload: {} });
    await page.goto(`${queue.url}/dashboard`);
    const cell = page.locator(`td[data-row="${type}"][data-col="pending"]`);
    // The catalog hears of new work within about a second; the page catches up by itself.
    await expect.poll(async () => ((await cell.count()) ? cell.innerText() : ""), { timeout: 15_000, interval: 250 }).toBe("1");
    const before = 1;
    // A mark on this document: a reload would lose it.
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
    await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 5 }, () => ({ type, payload: {} })) });
    await expect.poll(async () => Number((await cell.innerText()).replace(/,/g, "")), { timeout: 20_000, interval: 250 }).toBe(before + 5);
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    await screenshot(page, "overview");
  });

  test("a job's page and a scope's list follow their jobs live, through subscriptions, without a reload", async () => {
    const type = `${PULLED}.watched`;
    const scope = { type: "BrowserLive", id: Date.now().toString(36) };
    const { job } = await api("POST", "/v1/jobs", { type, payload: {}, scope });
    const sockets: string[] = [];
    page.on("websocket", (ws) => sockets.push(ws.url()));
    await page.goto(`${queue.url}/dashboard/jobs/${encodeURIComponent(job.id)}`);
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
    expect(await page.locator("footer").innerText()).toContain("live");
    const { jobs } = await api("POST", "/v1/claim", { worker: "browser-test", types: [type], limit: 1 });
    await api("POST", `/v1/jobs/${job.id}/progress`, { leaseToken: jobs[0].leaseToken, progress: 60 });
    // Well inside the page's 30 s fallback timer: the subscription's message is what refreshed it.
    await expect.poll(async () => ((await page.locator("[data-progress]").count()) ? page.locator("[data-progress]").innerText() : ""), { timeout: 4_000, interval: 100 }).toContain("60%");
    await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: jobs[0].leaseToken, result: { ok: true } });
    await expect.poll(() => page.locator("main").innerText(), { timeout: 4_000, interval: 100 }).toContain("completed");
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    expect(sockets.some((u) => u.includes("/v1/subscriptions/"))).toBe(true);
    await screenshot(page, "job-live");

    await page.goto(`${queue.url}/dashboard/jobs?scopeType=${scope.type}&scopeId=${scope.id}`);
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
    const { job: next } = await api("POST", "/v1/jobs", { type, payload: { second: true }, scope });
    await expect.poll(() => page.locator("main").innerText(), { timeout: 4_000, interval: 100 }).toContain(next.id.slice(-8));
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
  });

  test("every other page renders", async () => {
    for (const [path, name, text] of [
      ["/dashboard/scopes", "scopes", "Account:acme-0"],
      ["/dashboard/pools", "pools", "demo-pool"],
      ["/dashboard/schedules", "schedules", "nightly-report"],
      ["/dashboard/topics", "topics", DEAD_EVENT],
    ] as const) {
      const res = await page.goto(`${queue.url}${path}`);
      expect(res?.status(), path).toBe(200);
      // The live refresh brings in what the catalog learns after the first render.
      await expect.poll(() => page.locator("main").innerText(), { timeout: 15_000 }).toContain(text);
      await screenshot(page, name);
    }
  });

  test("a dead delivery goes back from the topics page", async () => {
    await page.goto(`${queue.url}/dashboard/topics`);
    const row = page.locator('[data-topic="demo.topic"] tr', { hasText: DEAD_EVENT });
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    await row.locator("button").click();
    await expect.poll(() => page.locator('[role="status"]').innerText()).toContain("Delivery handed back");
    const { items } = await api("GET", "/v1/jobs?type=demo.consumer.bad&tag=event:" + DEAD_EVENT);
    // Handed back: pending again, or already running / failed anew (the demo consumer always fails) — with a manual retry in its history.
    const { steps } = await api("GET", `/v1/jobs/${items[0].id}/timeline`);
    expect(steps.map((s: { note: string | null }) => s.note)).toContain("manual retry");
  });

  test("the overview's table fits at 1400 and 1920 px wide: every column shows, Pause included", async () => {
    for (const width of [1400, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${queue.url}/dashboard`);
      // demo.echo ran in beforeAll; the long type names of this run's other tests are in the table too.
      const pause = page.locator('button[data-pause="demo.echo"]');
      await expect.poll(() => pause.count(), { timeout: 15_000 }).toBe(1);
      // Brought into view vertically only: the table must not need scrolling sideways to show its last column.
      await page.evaluate((y) => window.scrollTo(0, y), (await pause.boundingBox())!.y - 100);
      const box = (await pause.boundingBox())!;
      expect(box.x, `Pause at ${width} px`).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, `Pause at ${width} px`).toBeLessThanOrEqual(width);
      // Visible, not clipped by the card it is in: the point at its middle is the button itself.
      expect(await pause.evaluate((b) => {
        const r = b.getBoundingClientRect();
        return b.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
      }), `Pause at ${width} px`).toBe(true);
      const card = page.locator("#types");
      expect(await card.evaluate((c) => c.scrollWidth - c.clientWidth), `#types overflow at ${width} px`).toBeLessThanOrEqual(0);
      await screenshot(page, `overview-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  test("a job waiting for a signal: its page says so and sends it; the CLI warns when the job waits for another name", async () => {
    const { job } = await api("POST", "/v1/jobs", { type: "demo.approve", payload: { timeoutMs: 3_600_000 } });
    await expect.poll(async () => (await api("GET", `/v1/jobs/${job.id}`)).job.state, { timeout: 15_000 }).toBe("waiting");

    // The CLI, against this queue: a misspelled name is kept, and a warning on stderr names what the job waits for.
    const wrong = await cli(["signal", job.id, "aprove", '{"by":"typo"}']);
    expect(wrong.code).toBe(0);
    expect(wrong.out).toBe(`${job.id}  kept: it is not waiting for signal "aprove"\n`);
    expect(wrong.err).toMatch(new RegExp(`^warning: the signal "aprove" was kept, but job ${job.id.replace(/\./g, "\\.")} waits for signal "approve" until \\d{4}-`));
    // A job that waits for nothing yet keeps it without a warning; bad data is a usage error naming the argument.
    const { job: pending } = await api("POST", "/v1/jobs", { type: PULLED, payload: {} });
    expect(await cli(["signal", pending.id, "go"])).toEqual({ code: 0, out: `${pending.id}  kept: it is not waiting now; the signal "go" is kept for its wait of that name to come\n`, err: "" });
    expect(await cli(["signal", pending.id, "go", "{nope"])).toMatchObject({ code: 2, err: expect.stringContaining("error: data-json: not JSON") });
    expect(JSON.parse((await cli(["--json", "signal", job.id, "aprove"])).out)).toEqual({ id: job.id, delivered: "kept", waitingFor: [expect.objectContaining({ kind: "signal", name: "approve" })] });

    await page.goto(`${queue.url}/dashboard/jobs/${encodeURIComponent(job.id)}`);
    expect(await page.locator("[data-waiting-for]").innerText()).toMatch(/^signal approve until \d{4}-/);
    const form = page.locator('form[data-signal="approve"]');
    expect(await form.locator("button").innerText()).toBe('Send "approve"');
    await screenshot(page, "job-waiting");
    await form.locator("textarea").fill('{"by":"browser"}');
    await form.locator("button").click();
    await expect.poll(() => page.locator('[role="status"]').innerText()).toContain("Signal sent");
    await expect.poll(async () => (await api("GET", `/v1/jobs/${job.id}`)).job, { timeout: 15_000 }).toMatchObject({ state: "completed", result: { approved: { by: "browser" } } });
    await screenshot(page, "job-signalled");
  });

  test("edgequeue tail prints every failure of a type as it happens, not the first page of a listing", async () => {
    // demo.fatal fails at once (TerminalJobError); other tests' failures of it may show too: ours must all be there.
    const tailing = cli(["tail", "--type", "demo.fatal", "--interval", "300", "--count", "20"]);
    await new Promise((r) => setTimeout(r, 1_000));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await api("POST", "/v1/jobs", { type: "demo.fatal", payload: { i } })).job.id);
    const { code, out } = await tailing;
    expect(code).toBe(0);
    const failed = out.split("\n").filter((l) => l.includes(" failed "));
    for (const id of ids) expect(failed.filter((l) => l.includes(id)), `${id} in:\n${out}`).toHaveLength(1);
  });

  test("an action without the page's CSRF token is refused, and changes nothing", async () => {
    const { job } = await api("POST", "/v1/jobs", { type: PULLED, payload: {} });
    // Same browser, same session cookie: only the form's token is missing.
    const res = await page.request.post(`${queue.url}/dashboard/jobs/${encodeURIComponent(job.id)}/cancel`, { form: { nothing: "here" }, maxRedirects: 0 });
    expect(res.status()).toBe(403);
    expect((await api("GET", `/v1/jobs/${job.id}`)).job.state).toBe("pending");
    // Signed out, the same page sends you to sign-in.
    await page.click('header form button[type="submit"]');
    await page.waitForURL("**/dashboard/login");
    await page.goto(`${queue.url}/dashboard/jobs/${encodeURIComponent(job.id)}`);
    expect(page.url()).toContain("/dashboard/login?next=");
  });
});
