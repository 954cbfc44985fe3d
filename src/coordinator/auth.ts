/**
 * Bearer-token auth for the HTTP API (DESIGN.md §7). Both tokens are hashed
 * first so the comparison is constant-time and length-independent. With no
 * QUEUE_TOKEN configured every call is refused: the API fails closed.
 *
 * @module
 */
import { QueueError } from "../errors";

const encoder = new TextEncoder();

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(text));
}

/** sameSecret: constant-time and length-independent (both are hashed first). The API's bearer check and the dashboard's sign-in, session and CSRF checks. */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([digest(a), digest(b)]);
  return crypto.subtle.timingSafeEqual(x, y);
}

/** requireToken throws `unauthorized` unless the Authorization header carries the configured token. */
export async function requireToken(expected: string | undefined, authorization: string | null): Promise<void> {
  if (!expected) throw new QueueError("unauthorized", "the queue has no QUEUE_TOKEN configured, so the HTTP API refuses every call; set it with `wrangler secret put QUEUE_TOKEN` (or .dev.vars locally)");
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
  if (!match) throw new QueueError("unauthorized", "missing bearer token: send `Authorization: Bearer <token>`");
  if (!(await sameSecret(match[1]!.trim(), expected))) throw new QueueError("unauthorized", "invalid bearer token");
}
