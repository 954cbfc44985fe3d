/**
 * Dashboard sign-in: the API token is exchanged for a session cookie, and
 * every state-changing form carries a CSRF token bound to that session.
 *
 * Both are HMACs under a key derived from QUEUE_TOKEN, so nothing is stored:
 * a session is valid until it expires (SESSION_TTL_MS) or the token changes
 * (rotating QUEUE_TOKEN signs everyone out). The cookie is HttpOnly, Secure
 * and SameSite=Strict (browsers accept Secure on http://localhost).
 *
 * @module
 */
import { encodeBytes } from "../base64url";
import { sameSecret } from "../coordinator/auth";

export const SESSION_COOKIE = "edgequeue_session";
export const SESSION_TTL_MS = 12 * 3600 * 1000;
export const CSRF_FIELD = "_csrf";

const encoder = new TextEncoder();

export interface Session {
  nonce: string;
  expiresAt: number;
}

/** The signing key, derived once per isolate and token (every page signs twice: the session check and its CSRF token). */
let cached: { token: string; key: Promise<CryptoKey> } | null = null;

function key(queueToken: string): Promise<CryptoKey> {
  if (cached?.token !== queueToken) {
    const key = crypto.subtle
      .digest("SHA-256", encoder.encode(`edgequeue dashboard v1\n${queueToken}`))
      .then((material) => crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]));
    cached = { token: queueToken, key };
  }
  return cached.key;
}

async function sign(queueToken: string, purpose: string, text: string): Promise<string> {
  const sig = await crypto.subtle.sign("HMAC", await key(queueToken), encoder.encode(`${purpose}\n${text}`));
  return encodeBytes(new Uint8Array(sig));
}

/** tokenMatches: the sign-in check, constant-time like the API's bearer check. */
export async function tokenMatches(queueToken: string | undefined, given: string): Promise<boolean> {
  return queueToken !== undefined && queueToken !== "" && (await sameSecret(queueToken, given));
}

/** newSession: the cookie value for a fresh session. */
export async function newSession(queueToken: string, now: number): Promise<string> {
  const nonce = encodeBytes(crypto.getRandomValues(new Uint8Array(18)));
  const expiresAt = now + SESSION_TTL_MS;
  const body = `${expiresAt}.${nonce}`;
  return `${body}.${await sign(queueToken, "session", body)}`;
}

/** readSession: the session a cookie value proves, or null (absent, forged, expired, or signed under another token). */
export async function readSession(queueToken: string | undefined, cookie: string | undefined, now: number): Promise<Session | null> {
  if (!queueToken || !cookie) return null;
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{43})$/.exec(cookie);
  if (!m) return null;
  const expiresAt = Number(m[1]);
  if (!(await sameSecret(m[3]!, await sign(queueToken, "session", `${m[1]}.${m[2]}`)))) return null;
  if (expiresAt <= now) return null;
  return { nonce: m[2]!, expiresAt };
}

/** csrfToken: the token this session's forms carry. */
export function csrfToken(queueToken: string, session: Session): Promise<string> {
  return sign(queueToken, "csrf", session.nonce);
}
