/**
 * The coordinator's HTTP API: a Hono app with a route per declared operation
 * (src/api/). Each request is authenticated (all of `/v1` but health), its
 * path, body and query are validated with the operation's zod schemas, and
 * the operation runs (coordinator/perform.ts). A known path
 * asked with a method it does not take answers 405 with `Allow`; the token is
 * checked first, so without it that is a 401 like any other /v1 call (README,
 * The HTTP API). Errors go through `errorResponse` only. The dashboard is
 * mounted beside it where the Worker is assembled (server/app.ts).
 *
 * @module
 */
import { Hono } from "hono";
import { cors } from "hono/cors";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { QueueError } from "../errors";
import { letGo, limitBody, readBodyWithin, readJsonBody } from "./body";
import { requirePrincipal } from "./auth";
import type { Principal } from "../auth/tokens";
import { errorResponse } from "./error-response";
import { ALSO_AS } from "./implementations";
import { QueueOps } from "./operations";
import { perform, statusOf } from "./perform";
import { wakeSchedules } from "./schedules";
import { OPERATION_LIST } from "../api";
import { SUBSCRIPTION_PATH } from "../job/schemas/subscriptions";
import { withTraceHeaders } from "./trace-headers";

/** Bodies larger than the batch payload limit and this are refused before they are read; payload limits are checked field by field after. */
const BODY_OVERHEAD_BYTES = 2 * 1024 * 1024;

/** The order methods are listed in an `Allow` header. */
const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "DELETE"];

export function createApp(): Hono<{ Bindings: Env; Variables: { principal: Principal } }> {
  const app = new Hono<{ Bindings: Env; Variables: { principal: Principal } }>();
  const served = OPERATION_LIST.map((r) => ({ method: r.method.toUpperCase(), auth: r.auth, path: new RegExp(`^${r.path.replace(/\{\w+\}/g, "[^/]+")}$`) }));
  /** The methods a concrete path takes; Hono answers HEAD with the GET handler (body dropped), so a GET path takes HEAD too. */
  const allowed = (path: string) => {
    const methods = new Set(served.filter((r) => r.path.test(path)).map((r) => r.method));
    if (methods.has("GET")) methods.add("HEAD");
    return METHOD_ORDER.filter((m) => methods.has(m));
  };
  // The declarations decide which paths are open (auth: false); everything else under /v1, unknown paths and wrong methods included, needs the token.
  const open = served.filter((r) => !r.auth);
  const asked = (method: string) => (method === "HEAD" ? "GET" : method);

  // A wait token is completed from anywhere — a page of another origin included: the token is the credential and no
  // cookie is involved (docs/workflows.md). Before the token check, so a browser's preflight is answered.
  app.use("/v1/tokens/*", cors({ origin: "*", allowMethods: ["POST"], allowHeaders: ["content-type"], maxAge: 86_400 }));
  // A subscription URL is its own credential (coordinator/subscriptions.ts): opened from any origin without the token,
  // its signature and expiry checked before any object hears of it. Registered before the token check, so it answers first.
  app.get(`${SUBSCRIPTION_PATH}/:token`, (c) => new QueueOps(c.env, loadConfig(c.env)).subscriptions.open(c.req.param("token"), c.req.raw, Date.now()));
  app.use("/v1/*", async (c, next) => {
    if (!open.some((o) => o.method === asked(c.req.method) && o.path.test(c.req.path))) {
      // A refused caller's body is let go unread, or wrangler dev would wait for all of it (body.ts, letGo).
      const who = await requirePrincipal(c.env, c.req.header("authorization") ?? null).catch((e: unknown) => {
        letGo(c.req.raw);
        throw e;
      });
      c.set("principal", who);
    }
    wakeSchedules(c.env, (p) => {
      try {
        c.executionCtx.waitUntil(p);
      } catch {
        // app.request() in tests has no execution context; the promise still runs.
      }
    });
    await next();
  });
  // After the token: a caller without one is told so, whatever it sends.
  app.use("/v1/*", limitBody((env) => loadConfig(env).limits.batchPayloadMaxBytes + BODY_OVERHEAD_BYTES));
  // Then read in time, or refused 408 (body.ts): every route reads the kept bytes.
  app.use("/v1/*", readBodyWithin());

  for (const op of OPERATION_LIST) {
    app.on(op.method.toUpperCase(), op.path.replace(/\{(\w+)\}/g, ":$1"), async (c) => {
      const config = loadConfig(c.env);
      const answer = await perform(op, new QueueOps(c.env, config, new URL(c.req.url).origin), {
        params: c.req.param(),
        query: c.req.query(),
        body: async () => withTraceHeaders(op.operationId, await readJsonBody(c), c.req.header("traceparent"), c.req.header("tracestate")),
      }, c.get("principal"));
      const also = ALSO_AS[op.operationId] as { wanted(accept?: string): boolean; render(answer: unknown): string } | undefined;
      if (op.alsoAs && also?.wanted(c.req.header("accept"))) return c.body(also.render(answer), 200, { "content-type": op.alsoAs.contentType });
      return c.json(answer as object, statusOf(op, answer));
    });
  }

  app.notFound((c) => {
    const allow = allowed(c.req.path);
    if (allow.length) {
      return errorResponse(new QueueError("method_not_allowed", `${c.req.path} does not take ${c.req.method}; it takes ${allow.join(", ")}`, { method: c.req.method, allowed: allow }));
    }
    return errorResponse(new QueueError("not_found", `no route for ${c.req.method} ${c.req.path}`));
  });
  app.onError((err) => errorResponse(err));
  return app;
}
