/** The dashboard over HTTP: sessions, CSRF, escaping, every page, and its actions changing what the API reports. */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { jobHref } from "../../src/dashboard/pages/jobs";
import { createWorker } from "../../src/pull-worker";
import { newSession, SESSION_TTL_MS } from "../../src/dashboard/session";
import { parseTokens } from "../../src/auth/tokens";
import { encodeText } from "../../src/base64url";
import { api, flushJobs, TOKEN, uniqueScope, uniqueType } from "../helpers/api";
import { writeCatalogUsage } from "../helpers/scope";

const ORIGIN = "http://queue.test";
const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

interface Opts {
  cookie?: string;
  form?: Record<string, string>;
  origin?: string;
  /** Sec-Fetch-Site, as a browser sends it. */
  site?: string;
}

async function page(method: string, path: string, o: Opts = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (o.cookie) headers.cookie = o.cookie;
  if (o.origin) headers.origin = o.origin;
  if (o.site) headers["sec-fetch-site"] = o.site;
  if (o.form) headers["content-type"] = "application/x-www-form-urlencoded";
  return (exports as any).default.fetch(`${ORIGIN}${path}`, { method, headers, body: o.form ? new URLSearchParams(o.form).toString() : undefined, redirect: "manual" });
}

async function signIn(token = TOKEN): Promise<{ cookie: string; csrf: string }> {
  const res = await page("POST", "/dashboard/login", { form: { token, next: "/dashboard" } });
  expect(res.status).toBe(303);
  const cookie = /^(edgequeue_session=[^;]+)/.exec(res.headers.get("set-cookie") ?? "")![1]!;
  const html = await (await page("GET", "/dashboard", { cookie })).text();
  return { cookie, csrf: csrfOf(html) };
}

function csrfOf(html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
}

async function enqueue(body: Record<string, unknown>): Promise<string> {
  const r = await api("POST", "/v1/jobs", { payload: {}, ...body });
  expect(r.status).toBe(201);
  return r.body.job.id;
}

const stateOf = async (id: string) => (await api("GET", `/v1/jobs/${id}`)).body.job.state;

describe("dashboard sessions", () => {
  it("pages redirect to sign-in and actions refuse without a session", async () => {
    for (const p of ["/dashboard", "/dashboard/jobs?state=failed", "/dashboard/scopes", "/dashboard/pools", "/dashboard/schedules", "/dashboard/topics", "/dashboard/jobs/x.y"]) {
      const res = await page("GET", p);
      expect(res.status, p).toBe(303);
      expect(res.headers.get("location")).toBe(`/dashboard/login?next=${encodeURIComponent(p)}`);
    }
    const id = await enqueue({ type: uniqueType() });
    for (const p of [`/dashboard/jobs/${id}/cancel`, "/dashboard/bulk/prune", "/dashboard/bulk/retry"]) {
      expect((await page("POST", p, { form: { olderThanHours: "0" } })).status, p).toBe(401);
    }
    expect(await stateOf(id)).toBe("pending");
  });

  it("signs in with the API token only, with a locked-down cookie", async () => {
    const wrong = await page("POST", "/dashboard/login", { form: { token: "not-it" } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expect(await wrong.text()).toContain("not one of the queue&#39;s tokens");

    const ok = await page("POST", "/dashboard/login", { form: { token: TOKEN, next: "/dashboard/pools" } });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/dashboard/pools");
    const cookie = ok.headers.get("set-cookie")!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/dashboard/);
    // Never a redirect to another site after sign-in.
    for (const next of ["//evil.example/x", "https://evil.example", "/\\evil.example", "/v1/stats"]) {
      expect((await page("POST", "/dashboard/login", { form: { token: TOKEN, next } })).headers.get("location"), next).toBe("/dashboard");
    }
  });

  it("refuses a tampered session cookie", async () => {
    const { cookie } = await signIn();
    const value = cookie.split("=")[1]!;
    const [expires, name, nonce, sig] = value.split(".");
    const tampered = [
      `${Number(expires) + 1000}.${name}.${nonce}.${sig}`, // extended expiry
      `${expires}.${name}.${nonce}x.${sig}`,
      `${expires}.${name}.${nonce}.${sig!.slice(0, -1)}${sig!.endsWith("A") ? "B" : "A"}`,
      `${Date.now() - 1}.${name}.${nonce}.${sig}`,
      // Another token's name on this token's signature (ops is an operator, as the admin it signed in as is not).
      `${expires}.${encodeText("ops")}.${nonce}.${sig}`,
      "garbage",
    ];
    for (const v of tampered) expect((await page("GET", "/dashboard", { cookie: `edgequeue_session=${v}` })).status, v).toBe(303);
    expect((await page("GET", "/dashboard", { cookie })).status).toBe(200);
  });

  it("refuses a cookie signed under another token, a validly signed expired one, and sign-in from another site or with no token set", async () => {
    const [other] = await parseTokens(undefined, "some-other-token");
    const foreign = await newSession(TOKEN, other!, Date.now());
    expect((await page("GET", "/dashboard", { cookie: `edgequeue_session=${foreign}` })).status).toBe(303);
    const [admin] = await parseTokens(undefined, TOKEN);
    const expired = await newSession(TOKEN, admin!, Date.now() - SESSION_TTL_MS - 1000);
    // Signed with the token's SHA-256 alone (what QUEUE_TOKENS holds), without the queue's secret: refused.
    const forged = await newSession("a-guess", admin!, Date.now());
    expect((await page("GET", "/dashboard", { cookie: `edgequeue_session=${forged}` })).status).toBe(303);
    expect((await page("GET", "/dashboard", { cookie: `edgequeue_session=${expired}` })).status).toBe(303);
    const elsewhere = await page("POST", "/dashboard/login", { form: { token: TOKEN }, origin: "https://evil.example" });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.headers.get("set-cookie")).toBeNull();
    const { createQueueApp } = await import("../../src/server/app");
    const { env } = await import("cloudflare:workers");
    const closed = await createQueueApp().request(
      "/dashboard/login",
      { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "content-length": "7" }, body: "token=x" },
      { ...(env as object), QUEUE_TOKEN: undefined, QUEUE_TOKENS: undefined },
    );
    expect(closed.status).toBe(401);
    expect(await closed.text()).toContain("no QUEUE_TOKEN configured");
  });

  it("signs out", async () => {
    const { cookie, csrf } = await signIn();
    const res = await page("POST", "/dashboard/logout", { cookie, form: { _csrf: csrf } });
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toMatch(/edgequeue_session=;.*Max-Age=0/);
  });
});

describe("dashboard roles (docs/operating.md \"Tokens and roles\")", () => {
  it("a reader signs in to pages without a button, and its action is refused 403 with nothing changed", async () => {
    const id = await enqueue({ type: "demo.approve" });
    const { cookie, csrf } = await signIn("viewer-token");
    const html = await (await page("GET", `/dashboard/jobs/${id}`, { cookie })).text();
    expect(html).toContain("viewer · reader");
    // The only form that posts is signing out.
    expect([...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1])).toEqual(["/dashboard/logout"]);
    const jobs = await (await page("GET", "/dashboard/jobs", { cookie })).text();
    expect(jobs).not.toContain("/dashboard/bulk/");
    const refused = await page("POST", `/dashboard/jobs/${id}/cancel`, { cookie, form: { _csrf: csrf } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('token "viewer" (role reader) may not change anything');
    expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).not.toBe("cancelled");
  });

  it("an operator's dashboard action is in the audit list with its name; producer, worker and limited tokens cannot sign in", async () => {
    const id = await enqueue({ type: "demo.approve" });
    const { cookie, csrf } = await signIn("ops-token");
    expect((await page("POST", `/dashboard/jobs/${id}/cancel`, { cookie, form: { _csrf: csrf } })).status).toBe(303);
    const audit = (await api("GET", "/v1/audit?action=dashboard%20/jobs/" + encodeURIComponent(id) + "/cancel")).body.items;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ token: "ops", role: "operator" });
    for (const token of ["shop-token", "pull-token", "mailer-token"]) {
      const res = await page("POST", "/dashboard/login", { form: { token, next: "/dashboard" } });
      expect(res.status, token).toBe(403);
      expect(res.headers.get("set-cookie"), token).toBeNull();
    }
  });
});

describe("dashboard edges", () => {
  it("pages are standards-mode HTML; /, /dashboard/ and unknown pages answer sensibly", async () => {
    const { cookie } = await signIn();
    expect(await (await page("GET", "/dashboard", { cookie })).text()).toMatch(/^<!DOCTYPE html><html lang="en">/);
    expect(await (await page("GET", "/dashboard/login")).text()).toMatch(/^<!DOCTYPE html>/);
    const slash = await page("GET", "/dashboard/", { cookie });
    expect(slash.status).toBe(301);
    expect(slash.headers.get("location")).toBe("/dashboard");
    const missing = await page("GET", "/dashboard/nothing-here", { cookie });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe("No such dashboard page.");
    // The Worker's root leads to the dashboard (server/app.ts mounts both).
    const root = await page("GET", "/");
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/dashboard");
  });

  it("is not there at all with dashboard.enabled = false", async () => {
    const { createQueueApp } = await import("../../src/server/app");
    const { env } = await import("cloudflare:workers");
    const off = { ...(env as object), EDGEQUEUE_CONFIG: { dashboard: { enabled: false } } };
    for (const [method, path] of [["GET", "/dashboard"], ["GET", "/dashboard/login"], ["POST", "/dashboard/login"], ["GET", "/dashboard/assets/app.js"]] as const) {
      expect((await createQueueApp().request(path, { method }, off)).status, path).toBe(404);
    }
    expect((await createQueueApp().request("/v1/health", {}, off)).status).toBe(200);
  });

  it("serves its stylesheet and script to anyone, and the overview flags a type lagging past lagAlertMs", async () => {
    const css = await page("GET", "/dashboard/assets/app.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect((await page("GET", "/dashboard/assets/app.js")).headers.get("content-type")).toMatch(/^text\/javascript/);
    const { cookie } = await signIn();
    const t = uniqueType("lag");
    const id = await enqueue({ type: t, runAt: Date.now() - 5 * 60_000 }); // due five minutes ago: lagging past the default minute
    await flushJobs(id);
    const html = await (await page("GET", "/dashboard", { cookie })).text();
    expect(html).toMatch(new RegExp(`<tr class="lag-alert"><td class="label"><a href="[^"]*">${t.split(".").join("\\.<wbr/>")}</a>`));
    expect(html).toMatch(new RegExp(`role="alert">Lagging past 1 m: [^<]*${t.replace(".", "\\.")} \\(5 m`));
  });

  it("the overview names a type whose due jobs nothing will run (undeclared, no binding, never claimed)", async () => {
    const { cookie } = await signIn();
    const t = uniqueType("typo");
    await flushJobs(await enqueue({ type: t }));
    const html = await (await page("GET", "/dashboard", { cookie })).text();
    expect(html).toMatch(new RegExp(`id="unhandled-types">[^<]*nothing will run[^<]*${t.replace(".", "\\.")}`));
  });

  it("a job's page shows its journal of steps, in order, with the attempt each ran in", async () => {
    const { cookie } = await signIn();
    const id = await enqueue({ type: "demo.steps", payload: { failAfter: "charge" } });
    await vi.waitFor(async () => expect(await stateOf(id)).toBe("completed"), { timeout: 10_000, interval: 20 });
    const html = await (await page("GET", `/dashboard/jobs/${id}`, { cookie })).text();
    const section = /<div class="card" id="steps">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? "";
    const rows = [...section.matchAll(/<tr><td class="num">(\d+)<\/td><td><code>(\w+)<\/code>[^]*?<td class="num">(\d+)<\/td>/g)].map((m) => [m[1], m[2], m[3]]);
    expect(rows).toEqual([
      ["0", "reserve", "1"],
      ["1", "charge", "1"],
      ["2", "ship", "2"],
    ]);
  });

  it("a job's page says what it waits for (a signal, an event), links a parent's children with their states and a child's parent", async () => {
    const { cookie } = await signIn();
    const approve = await enqueue({ type: "demo.approve", payload: { timeoutMs: 60_000 } });
    const paid = await enqueue({ type: "demo.await.paid", payload: { orderId: `o-${crypto.randomUUID()}` } });
    const parent = await enqueue({ type: "demo.parent", payload: { n: 3 } });
    await vi.waitFor(async () => expect([await stateOf(approve), await stateOf(paid), await stateOf(parent)]).toEqual(["waiting", "waiting", "completed"]), { timeout: 10_000, interval: 20 });
    const waitingFor = async (id: string) => /<dd data-waiting-for[^>]*>([\s\S]*?)<\/dd>/.exec(await (await page("GET", jobHref(id), { cookie })).text())?.[1] ?? "";
    expect(await waitingFor(approve)).toMatch(/^signal <code>approve<\/code><span class="muted"> until /);
    expect(await waitingFor(paid)).toMatch(/^event on <code>order\.paid<\/code><span class="muted"> \(no timeout\)/);
    const html = await (await page("GET", jobHref(paid), { cookie })).text();
    expect(html).toContain("(wait for an event)");
    expect(html).not.toContain("started, no result journaled");

    const parentPage = await (await page("GET", jobHref(parent), { cookie })).text();
    const children = /<div class="card" id="children">([\s\S]*?)<\/table>/.exec(parentPage)?.[1] ?? "";
    const rows = [...children.matchAll(/<tr data-child-row[^>]*><td><code>([^<]+)<\/code><\/td><td[^>]*><a href="\/dashboard\/jobs\/([^"]+)"[\s\S]*?<td>([^<]+)<\/td><td>[\s\S]*?>(completed|failed|pending|running|waiting)</g)];
    expect(rows.map((m) => [m[1], m[3], m[4]])).toEqual([
      ["item-0", "demo.echo", "completed"],
      ["item-1", "demo.echo", "completed"],
      ["item-2", "demo.echo", "completed"],
    ]);
    const child = decodeURIComponent(rows[0]![2]!);
    const childPage = await (await page("GET", jobHref(child), { cookie })).text();
    expect(childPage).toMatch(/<dd data-parent[^>]*><a href="([^"]+)">/);
    expect(/<dd data-parent[^>]*><a href="([^"]+)">/.exec(childPage)![1]).toBe(jobHref(parent));
    await api("POST", `/v1/jobs/${approve}/cancel`, {});
    await api("POST", `/v1/jobs/${paid}/cancel`, {});
  });

  it("a job's Pause and Resume buttons: a delayed job paused, its page saying so, then resumed to its time", async () => {
    const { cookie, csrf } = await signIn();
    const id = await enqueue({ type: "demo.noop", delayMs: 60_000 });
    const actions = async () => [...(await (await page("GET", jobHref(id), { cookie })).text()).matchAll(/<form method="post" action="(\/dashboard\/jobs\/[^"]+)" class="inline">/g)].map((m) => m[1]);
    expect(await actions()).toEqual([`${jobHref(id)}/pause`, `${jobHref(id)}/cancel`]);
    const paused = await page("POST", `${jobHref(id)}/pause`, { cookie, form: { _csrf: csrf } });
    expect([paused.status, paused.headers.get("location")]).toEqual([303, `${jobHref(id)}?done=job-paused`]);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "waiting", waitingFor: [{ kind: "pause" }] });
    const html = await (await page("GET", `${jobHref(id)}?done=job-paused`, { cookie })).text();
    expect(html).toContain("Paused: nothing runs it until it is resumed.");
    expect(/<dd data-waiting-for[^>]*>([\s\S]*?)<\/dd>/.exec(html)?.[1]).toBe('its resume <span class="muted">(paused)</span>');
    expect(await actions()).toEqual([`${jobHref(id)}/resume`, `${jobHref(id)}/cancel`]);
    expect((await page("POST", `${jobHref(id)}/resume`, { cookie, form: { _csrf: csrf } })).headers.get("location")).toBe(`${jobHref(id)}?done=job-resumed`);
    const resumed = (await api("GET", `/v1/jobs/${id}`)).body.job;
    expect(resumed).toMatchObject({ state: "pending", waitingFor: null });
    expect(resumed.runAt).toBeGreaterThan(Date.now() + 30_000);
    await api("POST", `/v1/jobs/${id}/cancel`, {});
  });

  it("a job's page says what it waits for: a wait token with its expiry, a child it invoked (linked)", async () => {
    const { cookie } = await signIn();
    const token = await enqueue({ type: "demo.token", payload: { timeoutMs: 60_000 } });
    // A parent run by a pull worker here, waiting for a child of a type nothing runs.
    const parentType = uniqueType("pull.parent");
    const childType = uniqueType("pull.child");
    const w = createWorker({ url: ORIGIN, token: TOKEN, types: [parentType], handlers: { [parentType]: (_p: unknown, ctx: any) => ctx.invoke("label", { type: childType, payload: {} }) }, fetch: fetchCoordinator, log: () => {} });
    const parent = await enqueue({ type: parentType });
    expect(await w.runOnce()).toBe(1);
    await w.stop();
    await vi.waitFor(async () => expect([await stateOf(token), await stateOf(parent)]).toEqual(["waiting", "waiting"]), { timeout: 10_000, interval: 20 });
    const child = (await api("GET", `/v1/jobs/${parent}`)).body.job.waitingFor[0].child as string;
    const waitingFor = async (id: string) => /<dd data-waiting-for[^>]*>([\s\S]*?)<\/dd>/.exec(await (await page("GET", jobHref(id), { cookie })).text())?.[1] ?? "";
    expect(await waitingFor(token)).toMatch(/^wait token <code>ok<\/code><span class="muted"> until \d{4}-/);
    expect(await waitingFor(parent)).toBe(`child <a href="${jobHref(child)}"><code>label</code></a>`);
    // Neither waits for a signal: no form to send one.
    for (const id of [token, parent]) expect(await (await page("GET", jobHref(id), { cookie })).text()).not.toContain('id="signal"');
    await api("POST", `/v1/jobs/${token}/cancel`, {});
    await api("POST", `/v1/jobs/${parent}/cancel`, {});
  });

  it("a job waiting for a signal: its page sends it, with JSON data or none; a wrong name is kept and says so; bad data names the field", async () => {
    const { cookie, csrf } = await signIn();
    const id = await enqueue({ type: "demo.approve", payload: { timeoutMs: 60_000 } });
    await vi.waitFor(async () => expect(await stateOf(id)).toBe("waiting"), { timeout: 10_000, interval: 20 });
    const html = await (await page("GET", jobHref(id), { cookie })).text();
    const form = /<form method="post" action="([^"]+)" class="signal" data-signal="approve">([\s\S]*?)<\/form>/.exec(html);
    expect(form?.[1]).toBe(`${jobHref(id)}/signal`);
    expect(form?.[2]).toContain(`name="_csrf" value="${csrf}"`);
    expect(form?.[2]).toContain('<input type="hidden" name="name" value="approve"/>');
    expect(form?.[2]).toMatch(/times out \d{4}-/);
    // Outside the live part: a refresh must not drop what was typed into it.
    const live = await (exports as any).default.fetch(`${ORIGIN}${jobHref(id)}`, { headers: { cookie, "x-edgequeue-live": "1" } });
    expect(await live.text()).not.toContain('id="signal"');

    const post = (form: Record<string, string>) => page("POST", `${jobHref(id)}/signal`, { cookie, form });
    // Without the session's CSRF token: refused, nothing sent.
    expect((await post({ name: "approve", data: "1" })).status).toBe(403);
    const bad = await post({ _csrf: csrf, name: "approve", data: "{by: me}" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("data: not JSON");
    expect((await post({ _csrf: csrf, data: "1" })).status).toBe(400);
    const wrong = await post({ _csrf: csrf, name: "aprove", data: "" });
    expect(wrong.headers.get("location")).toBe(`${jobHref(id)}?done=signal-kept-other`);
    expect(await (await page("GET", wrong.headers.get("location")!, { cookie })).text()).toContain("Signal kept, but the job waits for something else");
    expect(await stateOf(id)).toBe("waiting");

    const sent = await post({ _csrf: csrf, name: "approve", data: ' {"by": "dashboard"} ' });
    expect(sent.headers.get("location")).toBe(`${jobHref(id)}?done=signal-resumed`);
    await vi.waitFor(async () => expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: { approved: { by: "dashboard" } } }), { timeout: 10_000, interval: 20 });
    // Finished: a signal now is refused on a page, with the API's status.
    expect((await post({ _csrf: csrf, name: "approve" })).status).toBe(409);

    // No data at all is null: a bare "Approve".
    const bare = await enqueue({ type: "demo.approve" });
    await vi.waitFor(async () => expect(await stateOf(bare)).toBe("waiting"), { timeout: 10_000, interval: 20 });
    expect((await page("POST", `${jobHref(bare)}/signal`, { cookie, form: { _csrf: csrf, name: "approve", data: "" } })).headers.get("location")).toBe(`${jobHref(bare)}?done=signal-resumed`);
    await vi.waitFor(async () => expect((await api("GET", `/v1/jobs/${bare}`)).body.job).toMatchObject({ state: "completed", result: { approved: null } }), { timeout: 10_000, interval: 20 });
  });

  it("the pools page shows a keyed limit: its key path, each value's limit, and its busy values", async () => {
    const { cookie } = await signIn();
    const tenant = `dash-${crypto.randomUUID().slice(0, 8)}`;
    const id = await enqueue({ type: "demo.tenant", payload: { tenant, ms: 1500 } });
    await vi.waitFor(async () => expect(await stateOf(id)).toBe("running"), { timeout: 10_000, interval: 20 });
    const html = await vi.waitFor(async () => {
      const h = await (await page("GET", "/dashboard/pools", { cookie })).text();
      expect(h).toContain(`<code>${tenant}</code>`);
      return h;
    }, { timeout: 5_000, interval: 100 });
    const card = /<div class="card" data-pool="type:demo.tenant">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? "";
    expect(card).toMatch(/<dd data-keyed[^>]*><code>payload\.tenant<\/code>: concurrency 2 each/);
    expect(card).toMatch(new RegExp(`<code>${tenant}</code></td><td class="num">1</td>`));
  });

  it("refuses an oversized sign-in before reading it", async () => {
    const res = await page("POST", "/dashboard/login", { form: { token: "x".repeat(20_000) } });
    expect(res.status).toBe(413);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("shows a topic's dead deliveries however many tenant scopes hold failed jobs", async () => {
    const { cookie } = await signIn();
    const t = uniqueType("noise");
    // More homes with failed jobs than one listing page visits (20), all sorting before the consumers' type objects.
    for (let i = 0; i < 22; i++) {
      const id = await enqueue({ type: t, scope: uniqueScope(`noise${i}`) });
      await flushJobs(id);
      const j = (await api("POST", "/v1/claim", { worker: "w", types: [t], limit: 1 })).body.jobs[0];
      await api("POST", `/v1/jobs/${j.id}/fail`, { leaseToken: j.leaseToken, error: "x", fatal: true });
      await flushJobs(j.id);
    }
    const eventId = `dash-${crypto.randomUUID().slice(0, 8)}`;
    const bad = (await api("POST", "/v1/topics/demo.topic/events", { payload: {}, id: eventId })).body.deliveries[1];
    await vi.waitFor(async () => expect(await stateOf(bad)).toBe("failed"), { timeout: 10_000, interval: 20 });
    await flushJobs(bad);
    const html = await (await page("GET", "/dashboard/topics", { cookie })).text();
    expect(html).toContain(eventId);
    expect(html).toContain('name="eventId" value="' + eventId + '"');
  });
});

describe("dashboard CSRF", () => {
  it("a post without the session's CSRF token, or from another origin, changes nothing", async () => {
    const { cookie, csrf } = await signIn();
    const other = await signIn();
    const id = await enqueue({ type: uniqueType() });
    const attempts: Opts[] = [
      { cookie, form: {} },
      { cookie, form: { _csrf: "forged" } },
      { cookie, form: { _csrf: other.csrf } }, // another session's token
      { cookie, form: { _csrf: csrf }, origin: "https://evil.example" },
    ];
    for (const a of attempts) expect((await page("POST", `/dashboard/jobs/${id}/cancel`, a)).status).toBe(403);
    expect(await stateOf(id)).toBe("pending");
    const done = await page("POST", `/dashboard/jobs/${id}/cancel`, { cookie, form: { _csrf: csrf }, origin: ORIGIN });
    expect(done.status).toBe(303);
    expect(await stateOf(id)).toBe("cancelled");
  });
});

describe("dashboard protections (hono/secure-headers, hono/csrf, hono/body-limit)", () => {
  const POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

  it("every answer carries the policy and the secure headers, framing refused twice, no HSTS", async () => {
    const { cookie } = await signIn();
    for (const [p, status] of [["/dashboard", 200], ["/dashboard/login", 200], ["/dashboard/assets/app.js", 200], ["/dashboard/nothing-here", 404], ["/dashboard/jobs", 303]] as const) {
      const res = await page("GET", p, p === "/dashboard/jobs" ? {} : { cookie });
      expect(res.status, p).toBe(status);
      const h = Object.fromEntries(res.headers);
      expect(h, p).toMatchObject({
        "content-security-policy": POLICY,
        "x-frame-options": "DENY",
        "x-content-type-options": "nosniff",
        "referrer-policy": "same-origin",
        "cross-origin-opener-policy": "same-origin",
        "cross-origin-resource-policy": "same-origin",
      });
      expect(h["strict-transport-security"], p).toBeUndefined();
    }
  });

  it("a form the browser names as from another site is refused without an Origin too; one it names same-origin goes through", async () => {
    const { cookie, csrf } = await signIn();
    const id = await enqueue({ type: uniqueType() });
    for (const site of ["cross-site", "same-site"]) {
      expect((await page("POST", `/dashboard/jobs/${id}/cancel`, { cookie, form: { _csrf: csrf }, site })).status, site).toBe(403);
    }
    const login = await page("POST", "/dashboard/login", { form: { token: TOKEN }, site: "cross-site" });
    expect(login.status).toBe(403);
    expect(login.headers.get("set-cookie")).toBeNull();
    expect(await login.text()).toContain("Refused: the form came from another site.");
    expect(await stateOf(id)).toBe("pending");
    // Sec-Fetch-Site: same-origin is the browser vouching for it; the token is still needed.
    expect((await page("POST", `/dashboard/jobs/${id}/cancel`, { cookie, form: {}, site: "same-origin" })).status).toBe(403);
    expect((await page("POST", `/dashboard/jobs/${id}/cancel`, { cookie, form: { _csrf: csrf }, site: "same-origin" })).status).toBe(303);
    expect(await stateOf(id)).toBe("cancelled");
  });

  it("a form without a Content-Length is counted as it arrives: a small one is read, one over the limit refused", async () => {
    const streamed = (text: string) =>
      (exports as any).default.fetch(`${ORIGIN}/dashboard/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        // A stream of unknown length (a Blob's would be sent with its size).
        body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(text)), c.close()) }),
        duplex: "half",
        redirect: "manual",
      }) as Promise<Response>;
    const small = await streamed(new URLSearchParams({ token: TOKEN }).toString());
    expect(small.status).toBe(303);
    expect(small.headers.get("set-cookie")).toMatch(/^edgequeue_session=/);
    const big = await streamed(new URLSearchParams({ token: "x".repeat(20_000) }).toString());
    expect(big.status).toBe(413);
    expect(big.headers.get("set-cookie")).toBeNull();
  });

  it("a sign-in whose Content-Length claims more than it sends is answered at once, its body let go", async () => {
    const { createQueueApp } = await import("../../src/server/app");
    const { env } = await import("cloudflare:workers");
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(new TextEncoder().encode("token=")),
      cancel: () => void (cancelled = true),
    });
    const req = new Request(`${ORIGIN}/dashboard/login`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "content-length": String(20 * 1024 * 1024) }, body, duplex: "half" } as RequestInit);
    // As wrangler dev answers: it reads a body the Worker left unread to its end first.
    const answered = (async () => {
      const res = await createQueueApp().request(req, undefined, env);
      if (req.body && !req.bodyUsed) for (const reader = req.body.getReader(); !(await reader.read()).done; );
      return res;
    })();
    const res = await Promise.race([answered, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
    expect(res?.status).toBe(413);
    expect(cancelled).toBe(true);
  });
});

describe("dashboard pages", () => {
  it("every page renders for a session, with a strict content security policy", async () => {
    const { cookie } = await signIn();
    for (const p of ["/dashboard", "/dashboard/jobs", "/dashboard/jobs?type=demo.echo&state=completed", "/dashboard/scopes", "/dashboard/pools", "/dashboard/schedules", "/dashboard/topics"]) {
      const res = await page("GET", p, { cookie });
      expect(res.status, p).toBe(200);
      expect(res.headers.get("content-security-policy")).toMatch(/script-src 'self'/);
      expect(res.headers.get("content-security-policy")).toMatch(/frame-ancestors 'none'/);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(await res.text()).toContain('name="_csrf"');
    }
    const bad = await page("GET", "/dashboard/jobs?state=sleeping", { cookie });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("state[0]:");
    expect((await page("GET", "/dashboard/jobs/nope.nope", { cookie })).status).toBe(404);
  });

  it("renders payloads, results and errors as text, never markup", async () => {
    const { cookie } = await signIn();
    const t = uniqueType("xss");
    const id = await enqueue({ type: t, payload: { html: "<script>alert(1)</script>", q: "\"'&" } });
    const j = (await api("POST", "/v1/claim", { worker: "w", types: [t], limit: 1 })).body.jobs[0];
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: j.leaseToken, error: "<img src=x onerror=alert(2)>", fatal: true });
    for (const p of [`/dashboard/jobs/${id}`, `/dashboard/jobs?type=${t}`]) {
      const html = await (await page("GET", p, { cookie })).text();
      expect(html).not.toContain("<script>alert(1)");
      expect(html).not.toContain("<img src=x");
      expect(html).toContain("&lt;img src=x onerror=alert(2)&gt;");
      if (p.includes(id)) expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    }
  });

  it("a job page shows its timeline and the actions its state allows", async () => {
    const { cookie, csrf } = await signIn();
    const t = uniqueType("jp");
    const id = await enqueue({ type: t });
    const j = (await api("POST", "/v1/claim", { worker: "w", types: [t], limit: 1 })).body.jobs[0];
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: j.leaseToken, error: "boom", fatal: true });
    const html = await (await page("GET", `/dashboard/jobs/${id}`, { cookie })).text();
    expect(html).toContain("fatal: boom");
    expect(html).toContain('id="payload"');
    // The refresh script's requests leave the payload out: it lives outside the live parts.
    const live = await (exports as any).default.fetch(`${ORIGIN}/dashboard/jobs/${encodeURIComponent(id)}`, { headers: { cookie, "x-edgequeue-live": "1" } });
    const liveHtml = await live.text();
    expect(liveHtml).toContain("fatal: boom");
    expect(liveHtml).not.toContain('id="payload"');
    expect(html).toContain(`/dashboard/jobs/${encodeURIComponent(id)}/retry`);
    expect(html).not.toContain(`/dashboard/jobs/${encodeURIComponent(id)}/cancel`);
    const res = await page("POST", `/dashboard/jobs/${encodeURIComponent(id)}/retry`, { cookie, form: { _csrf: csrf } });
    expect(res.headers.get("location")).toBe(`/dashboard/jobs/${encodeURIComponent(id)}?done=retried`);
    expect(await stateOf(id)).toBe("pending");
    const after = await (await page("GET", res.headers.get("location")!, { cookie })).text();
    expect(after).toContain("Sent back to pending");
    expect(after).toContain("manual retry");
    // Retrying a pending job is refused on a page, with the API's status and reason.
    const again = await page("POST", `/dashboard/jobs/${encodeURIComponent(id)}/retry`, { cookie, form: { _csrf: csrf } });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("only failed, cancelled, superseded or expired jobs can be retried");
  });

  it("a finished job's page offers Rerun and Rerun from each step; the rerun's page links back", async () => {
    const { cookie, csrf } = await signIn();
    const r = await api("POST", "/v1/jobs", { type: "test.steps", payload: { mode: "three" } });
    const id = r.body.job.id as string;
    await vi.waitFor(async () => expect(await stateOf(id)).toBe("completed"), { timeout: 10_000 });
    const html = await (await page("GET", `/dashboard/jobs/${id}`, { cookie })).text();
    expect(html).toContain("data-rerun=");
    for (const step of ["a", "b", "c"]) expect(html).toContain(`data-rerun-from="${step}"`);
    const res = await page("POST", `/dashboard/jobs/${encodeURIComponent(id)}/rerun`, { cookie, form: { _csrf: csrf, fromStep: "b" } });
    expect(res.status).toBe(303);
    const rerun = (await api("GET", `/v1/jobs/${id}`)).body.job.reruns[0] as string;
    expect(res.headers.get("location")).toBe(`${jobHref(rerun)}?done=rerun`);
    const after = await (await page("GET", res.headers.get("location")!, { cookie })).text();
    expect(after).toContain("A rerun of the job");
    expect(after).toContain("data-rerun-of");
    expect(after).toContain(jobHref(id));
    // A step the journal lacks: the API's 400, naming the field.
    const bad = await page("POST", `/dashboard/jobs/${encodeURIComponent(id)}/rerun`, { cookie, form: { _csrf: csrf, fromStep: "nope" } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("fromStep");
  });

  it("the errors page lists a type's error groups, and retries a group's failed jobs", async () => {
    const { cookie, csrf } = await signIn();
    const t = uniqueType("err");
    const id = await enqueue({ type: t, maxAttempts: 1 });
    const j = (await api("POST", "/v1/claim", { worker: "w", types: [t], limit: 1 })).body.jobs[0];
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: j.leaseToken, error: "quota 42 exceeded" });
    const html = await (await page("GET", `/dashboard/errors?type=${t}`, { cookie })).text();
    expect(html).toContain("quota &lt;n&gt; exceeded");
    const fp = /data-group="([0-9a-f]{16})"/.exec(html)![1]!;
    expect(html).toContain('data-group-action="retry"');
    const res = await page("POST", "/dashboard/errors/retry", { cookie, form: { _csrf: csrf, type: t, fingerprint: fp } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/errors?type=${encodeURIComponent(t)}&done=group-retry&n=1&m=0`);
    expect(await stateOf(id)).toBe("pending");
    expect(await (await page("GET", res.headers.get("location")!, { cookie })).text()).toContain("1 failed job of the group sent back to pending");
  });

  it("bulk actions by the list's filter: a confirmation with the count first, then what the API does; prune", async () => {
    const { cookie, csrf } = await signIn();
    const t = uniqueType("bulk");
    const scope = uniqueScope();
    const id = await enqueue({ type: t, scope });
    const other = await enqueue({ type: t, scope, tags: ["keep"] });
    await flushJobs(id);
    const j = (await api("POST", "/v1/claim", { worker: "w", types: [t], limit: 1 })).body.jobs[0];
    await api("POST", `/v1/jobs/${j.id}/fail`, { leaseToken: j.leaseToken, error: "x", fatal: true });
    expect(j.id).toBe(id);
    // The list offers both for its filter.
    const list = await (await page("GET", `/dashboard/jobs?type=${t}&scopeType=${scope.type}&scopeId=${scope.id}`, { cookie })).text();
    expect(list).toContain('data-bulk="cancel"');
    expect(list).toContain('data-bulk="retry"');
    const form = { _csrf: csrf, type: t, scopeType: scope.type, scopeId: scope.id };
    // Retry: one failed job matches; nothing changes until it is confirmed.
    const confirm = await page("POST", "/dashboard/bulk/confirm", { cookie, form: { ...form, action: "retry" } });
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain('data-bulk-count="1"');
    expect(html).toContain('action="/dashboard/bulk/run"');
    expect(await stateOf(id)).toBe("failed");
    const res = await page("POST", "/dashboard/bulk/run", { cookie, form: { ...form, action: "retry" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("done=bulk-retry&n=1&m=0");
    expect(await stateOf(id)).toBe("pending");
    const landed = await page("GET", res.headers.get("location")!, { cookie });
    expect(landed.status).toBe(200); // the notice's keys are not list filters
    expect(await landed.text()).toContain("1 job sent back to pending");
    // Cancel: both pending jobs of the filter match, and are cancelled.
    expect(await (await page("POST", "/dashboard/bulk/confirm", { cookie, form: { ...form, action: "cancel" } })).text()).toContain('data-bulk-count="2"');
    const cancelled = await page("POST", "/dashboard/bulk/run", { cookie, form: { ...form, action: "cancel" } });
    expect(cancelled.headers.get("location")).toContain("done=bulk-cancel&n=2");
    expect([await stateOf(id), await stateOf(other)]).toEqual(["cancelled", "cancelled"]);
    // A filter the action cannot act on is refused, naming the field.
    const bad = await page("POST", "/dashboard/bulk/confirm", { cookie, form: { ...form, state: "completed", action: "cancel" } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("filter.state");

    await flushJobs(id);
    const pruned = await page("POST", "/dashboard/bulk/prune", { cookie, form: { _csrf: csrf, olderThanHours: "0" } });
    expect(pruned.status).toBe(303);
    expect((await api("GET", `/v1/jobs/${id}`)).status).toBe(404);
    expect((await page("GET", pruned.headers.get("location")!, { cookie })).status).toBe(200);
    for (const olderThanHours of ["soon", "", " ", "-1"]) {
      const bad = await page("POST", "/dashboard/bulk/prune", { cookie, form: { _csrf: csrf, olderThanHours } });
      expect(bad.status, JSON.stringify(olderThanHours)).toBe(400);
      expect(await bad.text()).toContain("olderThanHours");
    }
  });

  it("pauses and resumes a type from the overview: the button, the paused mark, and what the API reports", async () => {
    const { cookie, csrf } = await signIn();
    const type = uniqueType("dash-pause");
    await flushJobs(await enqueue({ type }));
    const paused = await page("POST", "/dashboard/types/pause", { cookie, form: { _csrf: csrf, type } });
    expect([paused.status, paused.headers.get("location")]).toEqual([303, "/dashboard?done=type-paused"]);
    expect((await api("GET", "/v1/types")).body.items.find((t: { type: string }) => t.type === type).paused).toBe(true);
    const html = await (await page("GET", "/dashboard?done=type-paused", { cookie })).text();
    expect(html).toContain("Type paused: its jobs are kept, none starts until it is resumed.");
    expect(html).toMatch(new RegExp(`${type.replace(".", "\\.")} <span class="chip">paused</span>`));
    expect(html).toContain(`<button type="submit" class="secondary" data-pause="${type}">Resume</button>`);
    await page("POST", "/dashboard/types/resume", { cookie, form: { _csrf: csrf, type } });
    expect((await api("GET", "/v1/types")).body.items.find((t: { type: string }) => t.type === type).paused).toBe(false);
    expect(await (await page("GET", "/dashboard", { cookie })).text()).toContain(`data-pause="${type}">Pause</button>`);
  });

  it("a job's page shows its kept log lines", async () => {
    const { cookie } = await signIn();
    const id = await enqueue({ type: "demo.log", payload: { lines: 2 } });
    await vi.waitFor(async () => expect(await stateOf(id)).toBe("completed"), { timeout: 10_000, interval: 20 });
    const html = await (await page("GET", `/dashboard/jobs/${id}`, { cookie })).text();
    const logs = /<div class="card" id="logs">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? "";
    expect(logs).toContain("line 1 of 2");
    expect(logs).toContain("line 2 of 2");
    expect(logs).toContain("{&quot;i&quot;:2}");
  });

  it("the schedules page shows each schedule's time zone, UTC when it names none", async () => {
    const { cookie } = await signIn();
    const berlin = `dash-tz-${crypto.randomUUID().slice(0, 8)}`;
    const plain = `dash-utc-${crypto.randomUUID().slice(0, 8)}`;
    expect((await api("PUT", `/v1/schedules/${berlin}`, { type: "demo.noop", cron: "0 3 * * *", tz: "Europe/Berlin" })).status).toBe(201);
    expect((await api("PUT", `/v1/schedules/${plain}`, { type: "demo.noop", everyMs: 3_600_000 })).status).toBe(201);
    const html = await (await page("GET", "/dashboard/schedules", { cookie })).text();
    const tzOf = (name: string) => new RegExp(`<tr data-schedule="${name}">[\\s\\S]*?<td data-tz[^>]*>([^<]*)</td>`).exec(html)?.[1];
    expect(tzOf(berlin)).toBe("Europe/Berlin");
    expect(tzOf(plain)).toBe("UTC");
    expect(html).toContain("<th>Time zone</th>");
    await api("DELETE", `/v1/schedules/${berlin}`);
    await api("DELETE", `/v1/schedules/${plain}`);
  });

  it("the cost panel shows rows per job by object kind, new objects' setup apart from the jobs' work and the fixed work, and each type's jobs", async () => {
    const { cookie } = await signIn();
    // A new tenant's object: its migrations are setup; its summary brings them to the catalog.
    const type = uniqueType("cost-panel");
    const scope = uniqueScope("cost-panel");
    await enqueue({ type, scope });
    await flushJobs();
    // The shards write the usage reports they hold (their alarm, within 5 s).
    await writeCatalogUsage();
    const html = await (await page("GET", "/dashboard", { cookie })).text();
    expect(html).toContain("Cost, last hour");
    for (const part of ["jobs", "fixed", "setup"]) expect(html).toMatch(new RegExp(`data-cost-part="${part}">[\\d.–]+ `));
    const setupOf = (kind: string) => Number(new RegExp(`<tr data-cost-object="${kind}">[\\s\\S]*?<td class="num">[\\d,]+</td><td class="num">([\\d,]+)</td>`).exec(html)?.[1]?.replaceAll(",", ""));
    expect(setupOf("scope")).toBeGreaterThan(0);
    expect(html).toContain(`<tr data-cost-type="${type}">`);
  });

  it("pauses and resumes an API schedule; a config schedule is refused", async () => {
    const { cookie, csrf } = await signIn();
    const name = `dash-${crypto.randomUUID().slice(0, 8)}`;
    expect((await api("PUT", `/v1/schedules/${name}`, { type: "demo.noop", cron: "0 3 * * *" })).status).toBe(201);
    const paused = await page("POST", "/dashboard/schedules/pause", { cookie, form: { _csrf: csrf, name } });
    expect(paused.status).toBe(303);
    expect((await api("GET", `/v1/schedules/${name}`)).body.schedule).toMatchObject({ paused: true, cron: "0 3 * * *", type: "demo.noop" });
    await page("POST", "/dashboard/schedules/resume", { cookie, form: { _csrf: csrf, name } });
    expect((await api("GET", `/v1/schedules/${name}`)).body.schedule.paused).toBe(false);
    const configured = (await api("GET", "/v1/schedules")).body.items.find((s: any) => s.source === "config");
    expect(configured).toBeDefined();
    expect((await page("POST", "/dashboard/schedules/pause", { cookie, form: { _csrf: csrf, name: configured.name } })).status).toBe(409);
  });
});
