/**
 * Bearer-token auth for the HTTP API (DESIGN.md §7). Both tokens are hashed
 * first so the comparison is constant-time and length-independent. With no
 * QUEUE_TOKEN configured every call is refused: the API fails closed.
 *
 * @module
 */
import { QueueError } from "../errors";
import { identify, tokensOf, type Principal } from "../auth/tokens";

const encoder = new TextEncoder();

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(text));
}

/** sameSecret: constant-time and length-independent (both are hashed first). The API's bearer check and the dashboard's sign-in, session and CSRF checks. */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([digest(a), digest(b)]);
  return crypto.subtle.timingSafeEqual(x, y);
}

/**
 * requirePrincipal: who the Authorization header's token is (auth/tokens.ts: QUEUE_TOKENS, or QUEUE_TOKEN as the
 * admin); throws `unauthorized` for none or an unknown one, `misconfigured` for tokens the queue cannot read.
 */
export async function requirePrincipal(env: { QUEUE_TOKEN?: string; QUEUE_TOKENS?: string }, authorization: string | null): Promise<Principal> {
  const entries = await tokensOf(env);
  if (entries.length === 0) {
    throw new QueueError("unauthorized", "the queue has no QUEUE_TOKEN nor QUEUE_TOKENS configured, so the HTTP API refuses every call; set one with `wrangler secret put QUEUE_TOKEN` (or .dev.vars locally)");
  }
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
  if (!match) throw new QueueError("unauthorized", "missing bearer token: send `Authorization: Bearer <token>`");
  const who = await identify(entries, match[1]!.trim());
  if (!who) throw new QueueError("unauthorized", "invalid bearer token");
  return who;
}
