/**
 * Request bodies: the bound on their size, and reading one as JSON — a clear
 * error when it is not JSON, and `{}` for an empty body (every route whose
 * fields are all optional then needs no body at all).
 *
 * The bound is hono/body-limit's (app.ts): a body whose Content-Length is over
 * it is refused before a byte of it is read, one without a Content-Length as
 * soon as what has arrived is over it. Either way the answer is the API's
 * `413 payload_too_large` (docs/http-api.md "The HTTP API", errors).
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Env } from "../env";
import { QueueError } from "../errors";

/** limitBody: refuse a body over `maxBytes(env)` with `payload_too_large`, before the route reads it. */
export function limitBody(maxBytes: (env: Env) => number): MiddlewareHandler<{ Bindings: Env }> {
  return (c, next) => {
    // No body (a GET): nothing to bound, and no reason to read the config.
    if (!c.req.raw.body) return next();
    const limit = maxBytes(c.env);
    return bodyLimit({ maxSize: limit, onError: (c) => refuseBody(c.req.raw, limit) })(c, next);
  };
}

/** refuseBody throws the 413, having let go of the rest of the body. */
export function refuseBody(req: Request, maxBytes: number): never {
  letGo(req);
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new QueueError("payload_too_large", `request body is ${declared} bytes (its Content-Length); the limit is ${maxBytes}`, { path: "body", bytes: declared, limitBytes: maxBytes });
  }
  throw new QueueError("payload_too_large", `request body is over ${maxBytes} bytes, the limit`, { path: "body", limitBytes: maxBytes });
}

/**
 * letGo cancels what a refused request still has to send (the API's bodies and the dashboard's forms).
 * wrangler dev reads a body the Worker left unread to its end before it passes the answer on, so a
 * client whose Content-Length claims more than it sends would otherwise get no answer at all. A body
 * already being read (body-limit counting one without a Content-Length) is left to its reader.
 */
export function letGo(req: Request): void {
  if (req.body && !req.body.locked) req.body.cancel().catch(() => {});
}

/** readJsonBody: the body as JSON; its size was bounded by limitBody before the route ran. */
export async function readJsonBody(req: Request): Promise<unknown> {
  const text = new TextDecoder().decode(await req.arrayBuffer());
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new QueueError("invalid_request", `request body is not valid JSON: ${(e as Error).message}`, [{ path: "body", message: "not valid JSON" }]);
  }
}
