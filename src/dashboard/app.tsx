/** @jsxImportSource hono/jsx */
/**
 * The dashboard at `/dashboard`: server-rendered pages over the same
 * QueueOps the API uses, so a page shows exactly what the API would answer.
 *
 * - Every page but sign-in needs a session (dashboard/session.ts); a page
 *   asked for without one redirects to sign-in, an action is refused (401).
 * - Every POST needs the session's CSRF token and, when the browser names the
 *   request's origin or site, a same-origin one (hono/csrf); otherwise 403 and
 *   nothing changes. A form is at most FORM_MAX_BYTES (hono/body-limit).
 * - Responses carry hono/secure-headers' headers with a strict
 *   Content-Security-Policy (scripts and styles from 'self' only), no framing,
 *   no caching. JSX escapes every value, so stored payloads and errors render
 *   as text. (docs/operating.md "Dashboard and metrics", Sign-in.)
 *
 * @module
 */
import { errorRoutes, ERROR_NOTICES } from "./errors-routes";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { secureHeaders } from "hono/secure-headers";
import { loadConfig } from "../config/load";
import { QueueOps } from "../coordinator/operations";
import { parseInput } from "../coordinator/validate";
import type { Env } from "../env";
import { QueueError } from "../errors";
import { JobId, ListQuerySchema, DeadRetryParams, TypeParams } from "../job/schemas";
import { BudgetParams } from "../job/schemas/budgets";
import { ScheduleNameSchema } from "../job/schedule-spec";
import { APP_CSS, APP_JS } from "./assets";
import type { DashContext, Vars } from "./context";
import { BULK_NOTICES, bulkRoutes } from "./bulk-routes";
import { SIGNAL_NOTICES, signalRoute } from "./signal-route";
import { JOB_NOTICES, jobRoutes } from "./job-routes";
import { Layout, type PageFrame } from "./layout";
import { CHILDREN_SHOWN, JobPage } from "./pages/job";
import { jobPaths, listPaths } from "./live";
import { jobHref, JobsPage } from "./pages/jobs";
import { LoginPage } from "./pages/login";
import { OverviewPage } from "./pages/overview";
import { PoolsPage } from "./pages/pools";
import { SchedulesPage } from "./pages/schedules";
import { ScopesPage } from "./pages/scopes";
import { TopicsPage, type TopicView } from "./pages/topics";
import { sameSecret } from "../coordinator/auth";
import { letGo, readBodyWithin } from "../coordinator/body";
import { CSRF_FIELD, csrfToken, newSession, readSession, SESSION_COOKIE, SESSION_TTL_MS, type Session } from "./session";
import { identify, tokensOf, type TokenEntry } from "../auth/tokens";
import { roleAllows, rolesFor } from "../auth/roles";
import { auditDetail } from "../coordinator/audit";


/**
 * The headers every page and answer carries: hono/secure-headers' defaults, with this policy (no inline
 * script or style anywhere, so no nonce), the referrer kept to our own origin, framing refused by both
 * headers, and no Strict-Transport-Security — that is the host's decision, not one path's.
 */
const SECURE_HEADERS = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", "data:"],
    connectSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  },
  referrerPolicy: "same-origin",
  xFrameOptions: "DENY",
  strictTransportSecurity: false,
});
const DEAD_PER_CONSUMER = 20;
/** Sent by the page's refresh script: only the live parts are used, so the rest may be left out. */
const LIVE_HEADER = "x-edgequeue-live";
const TIMELINE_STEPS = 100;
/** Forms are a few fields; anything bigger is refused before it is parsed (sign-in is open to anyone). */
const FORM_MAX_BYTES = 16 * 1024;
/** The job list's own query keys; others (a notice's `done`, `n`, `m`) are not filters. */
const LIST_KEYS = ["type", "state", "scopeType", "scopeId", "tag", "cursor"];

/** Notices an action redirects with: fixed texts (with counts), never text from the query. */
const NOTICES: Record<string, (n: number, m: number) => string> = {
  ...JOB_NOTICES,
  ...BULK_NOTICES,
  ...ERROR_NOTICES,
  ...SIGNAL_NOTICES,
  paused: () => "Schedule paused.",
  resumed: () => "Schedule resumed.",
  "type-paused": () => "Type paused: its jobs are kept, none starts until it is resumed.",
  "budget-lifted": () => "Budget lifted: the types it paused run again, and it pauses nothing more until its window turns.",
  "type-resumed": () => "Type resumed.",
  "dead-retried": () => "Delivery handed back: due now, attempts 0.",
};

export function createDashboard(): Hono<{ Bindings: Env; Variables: Vars }> {
  const d = new Hono<{ Bindings: Env; Variables: Vars }>();

  // `dashboard.enabled = false`: as if there were none.
  d.use("*", async (c, next) => {
    if (!loadConfig(c.env).dashboard.enabled) return c.text("No such page: the dashboard is turned off (dashboard.enabled = false).", 404);
    await next();
  });

  d.use("*", SECURE_HEADERS, async (c, next) => {
    await next();
    if (!c.req.path.startsWith("/dashboard/assets/")) c.res.headers.set("cache-control", "no-store");
  });
  // Before anything reads a form: sign-in is open to anyone. Then the form is read in time, or refused 408, as the
  // API's bodies are (coordinator/body.ts).
  d.use("*", bodyLimit({ maxSize: FORM_MAX_BYTES, onError: formTooBig }), readBodyWithin(), sameOrigin);

  d.get("/assets/app.css", (c) => c.body(APP_CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=300" }));
  d.get("/assets/app.js", (c) => c.body(APP_JS, 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=300" }));

  d.get("/login", (c) => c.html(<LoginPage next={safeNext(c.req.query("next"))} />));
  d.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(typeof form.next === "string" ? form.next : undefined);
    const entries = await tokensOf(c.env);
    // QUEUE_TOKEN is the queue's own secret: it signs the sessions (session.ts), so sign-in needs it set.
    if (!c.env.QUEUE_TOKEN) {
      return c.html(<LoginPage next={next} error="The queue has no QUEUE_TOKEN configured, so sign-in is closed: it signs the dashboard's sessions. Set it with `wrangler secret put QUEUE_TOKEN` (or .dev.vars locally)." />, 401);
    }
    const who = typeof form.token === "string" ? await identify(entries, form.token) : null;
    if (!who) return c.html(<LoginPage next={next} error="That is not one of the queue's tokens." />, 401);
    // The dashboard shows the whole queue: a token that may not read it, or that is limited to some types, does not sign in.
    if (!roleAllows(who.role, "read")) {
      return c.html(<LoginPage next={next} error={`Token "${who.name}" is a ${who.role} token: the dashboard needs the role ${rolesFor("read").join(", ")}.`} />, 403);
    }
    if (who.types !== null || who.scopeTypes !== null) {
      return c.html(<LoginPage next={next} error={`Token "${who.name}" is limited to some types, and the dashboard shows every type: sign in with a token that is not.`} />, 403);
    }
    const entry = entries.find((e) => e.principal === who) as TokenEntry;
    setCookie(c, SESSION_COOKIE, await newSession(c.env.QUEUE_TOKEN, entry, Date.now()), {
      httpOnly: true,
      secure: true,
      sameSite: "Strict",
      path: "/dashboard",
      maxAge: SESSION_TTL_MS / 1000,
    });
    return c.redirect(next, 303);
  });

  // Everything below needs a session; POSTs also the CSRF token.
  d.use("*", async (c, next) => {
    const read = await readSession(c.env.QUEUE_TOKEN, await tokensOf(c.env), getCookie(c, SESSION_COOKIE), Date.now());
    // Checked at every request, not only at sign-in: a token whose role or limits changed since is signed out.
    const session = read && roleAllows(read.principal.role, "read") && read.principal.types === null && read.principal.scopeTypes === null ? read : null;
    if (!session) {
      if (c.req.method === "GET") return c.redirect(`/dashboard/login?next=${encodeURIComponent(c.req.path + new URL(c.req.url).search)}`, 303);
      return c.text("Sign in first: this action needs a dashboard session.", 401);
    }
    c.set("session", session);
    c.set("csrf", await csrfToken(c.env.QUEUE_TOKEN!, session));
    if (c.req.method === "POST") {
      const form = await c.req.parseBody();
      const given = form[CSRF_FIELD];
      if (typeof given !== "string" || !(await sameSecret(given, c.get("csrf")))) {
        return c.text("Refused: the form's CSRF token is missing or wrong (reload the page and try again).", 403);
      }
      c.set("form", Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => typeof e[1] === "string" && e[0] !== CSRF_FIELD)));
    }
    await next();
  });

  // Every action but signing out is an operator's (docs/operating.md "Tokens and roles"): refused to a reader, and
  // recorded in the audit list with the token's name once it succeeded (a redirect to its page).
  d.use("*", async (c, next) => {
    if (c.req.method !== "POST" || c.req.path === "/dashboard/logout") return next();
    const who = c.get("session").principal;
    if (!roleAllows(who.role, "operate")) {
      return c.text(`Refused: token "${who.name}" (role ${who.role}) may not change anything; that needs the role ${rolesFor("operate").join(" or ")}.`, 403);
    }
    await next();
    if (c.res.status === 303) {
      const form = c.get("form");
      await opsOf(c)
        .audit.record(who, `dashboard ${c.req.path.replace(/^\/dashboard/, "")}`, auditDetail({ body: form }, null))
        .catch((e: unknown) => console.error(JSON.stringify({ event: "audit:record_failed", token: who.name, action: c.req.path, error: String(e) })));
    }
  });

  d.post("/logout", (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: "/dashboard", secure: true });
    return c.redirect("/dashboard/login", 303);
  });

  d.get("/", async (c) => {
    const ops = opsOf(c);
    const [metrics, pauses, budgets] = await Promise.all([ops.overview.metrics({ minutes: 60 }), ops.overview.pauses(), ops.budgets.list()]);
    const paused = new Set([...pauses].filter(([, p]) => p.paused).map(([t]) => t));
    return c.html(<OverviewPage frame={frame(c, "Overview", "")} metrics={metrics} lagAlertMs={loadConfig(c.env).dashboard.lagAlertMs} paused={paused} budgets={budgets} />);
  });

  d.get("/jobs", async (c) => {
    // Empty fields of the filter form mean "any".
    const raw = Object.fromEntries(Object.entries(c.req.query()).filter(([k, v]) => v !== "" && LIST_KEYS.includes(k)));
    const query = parseInput(ListQuerySchema, { limit: "50", ...raw }, "query");
    const page = await opsOf(c).fanOut.list(query);
    const types = Object.keys(loadConfig(c.env).types);
    const scope = query.scopeType !== undefined && query.scopeId !== undefined ? { type: query.scopeType, id: query.scopeId } : null;
    const subscribe = await listPaths(c.env, page.items, scope, Date.now());
    return c.html(<JobsPage frame={{ ...frame(c, "Jobs", "jobs"), subscribe }} query={query} types={types} items={page.items} nextCursor={page.nextCursor} />);
  });

  d.get("/jobs/:id", async (c) => {
    const id = parseInput(JobId, c.req.param("id"), "id");
    const ops = opsOf(c);
    const [job, timeline, journal, logs, children] = await Promise.all([ops.jobs.get(id), ops.jobs.timeline(id, TIMELINE_STEPS), ops.jobs.steps(id), ops.jobs.logs(id), ops.jobs.children(id, -1, CHILDREN_SHOWN)]);
    const subscribe = await jobPaths(c.env, job, Date.now());
    return c.html(<JobPage frame={{ ...frame(c, `Job ${job.type}`, "jobs"), subscribe }} job={job} timeline={timeline} journal={journal} logs={logs} children={children} live={c.req.header(LIVE_HEADER) !== undefined} />);
  });

  jobRoutes(d, opsOf);
  signalRoute(d, opsOf);

  bulkRoutes(d, { ops: opsOf, frame: (c, title) => frame(c, title, "jobs") });

  errorRoutes(d, { ops: opsOf, frame: (c, title) => frame(c, title, "errors") });

  d.get("/scopes", async (c) => c.html(<ScopesPage frame={frame(c, "Scopes", "scopes")} items={await opsOf(c).overview.busiestScopes(100)} />));

  d.get("/pools", async (c) => c.html(<PoolsPage frame={frame(c, "Pools", "pools")} pools={await opsOf(c).pools.list()} />));

  d.get("/schedules", async (c) => c.html(<SchedulesPage frame={frame(c, "Schedules", "schedules")} items={await opsOf(c).schedules.list()} />));

  for (const action of ["pause", "resume"] as const) {
    d.post(`/schedules/${action}`, async (c) => {
      const name = parseInput(ScheduleNameSchema, c.get("form").name, "name");
      await opsOf(c).schedules.setPaused(name, action === "pause");
      return c.redirect(`/dashboard/schedules?done=${action === "pause" ? "paused" : "resumed"}`, 303);
    });
  }

  for (const action of ["pause", "resume"] as const) {
    d.post(`/types/${action}`, async (c) => {
      const { type } = parseInput(TypeParams, { type: c.get("form").type }, "form");
      await opsOf(c).overview.setPaused(type, action === "pause");
      return c.redirect(`/dashboard?done=type-${action === "pause" ? "paused" : "resumed"}`, 303);
    });
  }

  d.post("/budgets/lift", async (c) => {
    const { name } = parseInput(BudgetParams, { name: c.get("form").name }, "form");
    await opsOf(c).budgets.lift(name);
    return c.redirect("/dashboard?done=budget-lifted", 303);
  });

  d.get("/topics", async (c) => {
    const ops = opsOf(c);
    // Per consumer: its deliveries live in its own type's objects, so the listing never wades through tenant scopes.
    const topics: TopicView[] = await Promise.all(
      Object.entries(loadConfig(c.env).topics).map(async ([topic, consumers]) => {
        const pages = await Promise.all(consumers.map((consumer) => ops.topics.dead(topic, { consumer, limit: DEAD_PER_CONSUMER })));
        return { topic, consumers, dead: pages.flatMap((p) => p.items), more: pages.some((p) => p.nextCursor !== null) };
      }),
    );
    return c.html(<TopicsPage frame={frame(c, "Topics", "topics")} topics={topics} />);
  });

  d.post("/topics/retry-dead", async (c) => {
    const f = c.get("form");
    const p = parseInput(DeadRetryParams, { topic: f.topic, consumer: f.consumer, eventId: f.eventId }, "form");
    await opsOf(c).topics.retryDead(p.topic, p.consumer, p.eventId);
    return c.redirect("/dashboard/topics?done=dead-retried", 303);
  });

  // A sub-app's notFound is not used once mounted: a catch-all does the job.
  d.all("*", (c) => c.text("No such dashboard page.", 404));

  // A refused action or a bad filter is shown on a page, with the API's status and message; anything else is a 500 page.
  d.onError((err, c) => {
    const e = err instanceof QueueError ? err : null;
    if (!e) console.error(JSON.stringify({ event: "dashboard:error", path: c.req.path, error: String(err) }));
    const message = e ? e.message : "Something went wrong on the server; the log has the details.";
    const session = c.get("session");
    if (!session) return c.text(message, e?.status ?? 500);
    return c.html(
      <ErrorPage frame={{ ...frame(c as DashContext, "Could not do that", ""), error: message }} />,
      (e?.status ?? 500) as 400,
    );
  });

  return d;
}

function ErrorPage(props: { frame: PageFrame }) {
  return (
    <Layout {...props.frame}>
      <p>
        <a href="/dashboard">overview</a> · <a href="/dashboard/jobs">jobs</a>
      </p>
    </Layout>
  );
}

function opsOf(c: DashContext): QueueOps {
  return new QueueOps(c.env, loadConfig(c.env));
}

function frame(c: DashContext, title: string, section: PageFrame["section"]): PageFrame {
  const done = c.req.query("done");
  const count = (k: string) => Math.max(0, Math.floor(Number(c.req.query(k) ?? 0)) || 0);
  const notice = done && Object.hasOwn(NOTICES, done) ? NOTICES[done]!(count("n"), count("m")) : null;
  const who = c.get("session").principal;
  return { title, section, csrf: c.get("csrf"), now: Date.now(), notice, who: { name: who.name, role: who.role }, canOperate: roleAllows(who.role, "operate") };
}

/** safeNext: where to go after sign-in — a dashboard path only, never another site. */
function safeNext(next: string | undefined): string {
  return next && next.startsWith("/dashboard") && !next.startsWith("//") && !/[\\\r\n]/.test(next) ? next : "/dashboard";
}

/** formTooBig: bodyLimit's 413, before anything reads the form (one without a Content-Length is counted as it arrives). */
function formTooBig(c: Context): Response {
  letGo(c.req.raw);
  return c.text(`Refused: a dashboard form is at most ${FORM_MAX_BYTES} bytes.`, 413);
}

const sameOriginForm = csrf();

/**
 * sameOrigin: CSRF defence in depth, beside the form's token. A browser names where a form comes from
 * (Origin, Sec-Fetch-Site); hono/csrf refuses a form it names as from anywhere but here. A request that
 * names neither is no browser's cross-site form (a script posting with the token): the token alone
 * decides.
 */
const sameOrigin: MiddlewareHandler = async (c, next) => {
  if (c.req.header("origin") === undefined && c.req.header("sec-fetch-site") === undefined) return next();
  try {
    return await sameOriginForm(c, next);
  } catch (e) {
    if (!(e instanceof HTTPException) || e.status !== 403) throw e;
    letGo(c.req.raw);
    const error = "Refused: the form came from another site.";
    return c.req.path === "/dashboard/login" ? c.html(<LoginPage next="/dashboard" error={error} />, 403) : c.text(error, 403);
  }
};
