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
 * A body is also bounded in time: read once, up front (`readBodyWithin`), and
 * refused `408 request_timeout` when nothing of it arrives for BODY_IDLE_MS —
 * a client whose Content-Length promises more than it sends would otherwise
 * hold its connection, and the Worker's invocation, with no answer. Everything
 * after reads the bytes kept (Hono's body cache), never the stream.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
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

/** How long a body may send nothing before it is refused (docs/http-api.md "The HTTP API", errors). */
export const BODY_IDLE_MS = 10_000;

/**
 * readBodyWithin: a middleware that reads the request's body once, refusing it `408` when nothing of it arrives for
 * `idleMs` (letting go of the rest), and keeps the bytes where every Hono body reader finds them.
 */
export function readBodyWithin(idleMs = BODY_IDLE_MS): MiddlewareHandler {
  return async (c, next) => {
    const body = c.req.raw.body;
    if (body && !c.req.raw.bodyUsed) (c.req.bodyCache as { arrayBuffer?: Promise<ArrayBuffer> }).arrayBuffer = Promise.resolve(await readWithin(body, idleMs));
    await next();
  };
}

/** readWithin: the whole body, or a 408 once nothing arrived for `idleMs` — one timer per body, moved on as chunks come. */
async function readWithin(body: ReadableStream<Uint8Array>, idleMs: number): Promise<ArrayBuffer> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let lastAt = Date.now();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const idle = new Promise<"idle">((resolve) => {
    const check = () => {
      const quiet = Date.now() - lastAt;
      timer = quiet >= idleMs ? null : setTimeout(check, idleMs - quiet);
      if (timer === null) resolve("idle");
    };
    timer = setTimeout(check, idleMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), idle]);
      if (next === "idle") {
        reader.cancel().catch(() => {});
        throw new QueueError("request_timeout", `the request body stopped arriving: nothing for ${idleMs / 1000} s after ${size} bytes (does its Content-Length match what is sent?)`, { path: "body", bytes: size });
      }
      if (next.done) break;
      lastAt = Date.now();
      chunks.push(next.value);
      size += next.value.byteLength;
    }
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out.buffer;
}

/** readJsonBody: the body as JSON, from the bytes readBodyWithin kept; its size was bounded by limitBody before. */
export async function readJsonBody(c: Context): Promise<unknown> {
  const text = new TextDecoder().decode(await c.req.arrayBuffer());
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new QueueError("invalid_request", `request body is not valid JSON: ${(e as Error).message}`, [{ path: "body", message: "not valid JSON" }]);
  }
}
