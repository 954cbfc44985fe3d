/**
 * Dashboard sign-in: a token of the queue (auth/tokens.ts) is exchanged for a session cookie naming it, and every
 * state-changing form carries a CSRF token bound to that session.
 *
 * Both are HMACs under a key derived from the signed-in token's SHA-256 (what QUEUE_TOKENS holds, or QUEUE_TOKEN's),
 * so nothing is stored: a session is valid until it expires (SESSION_TTL_MS), or its token is removed or changed
 * (rotating a token signs its sessions out). The cookie names the token, so each page knows its role (the buttons
 * it shows, the actions it takes: docs/operating.md "Tokens and roles"). The cookie is HttpOnly, Secure and
 * SameSite=Strict (browsers accept Secure on http://localhost).
 *
 * @module
 */
import { decodeText, encodeBytes, encodeText } from "../base64url";
import { sameSecret } from "../coordinator/auth";
import { byName, type Principal, type TokenEntry } from "../auth/tokens";

export const SESSION_COOKIE = "edgequeue_session";
export const SESSION_TTL_MS = 12 * 3600 * 1000;
export const CSRF_FIELD = "_csrf";

const encoder = new TextEncoder();

export interface Session {
  nonce: string;
  expiresAt: number;
  /** The token signed in with. */
  principal: Principal;
  /** Its entry: what signs the session and its forms. */
  entry: TokenEntry;
}

/** The signing keys, one per token digest, derived once per isolate (every page signs twice: the session check and its CSRF token). */
const keys = new Map<string, Promise<CryptoKey>>();

function key(entry: TokenEntry): Promise<CryptoKey> {
  const id = encodeBytes(entry.digest);
  let k = keys.get(id);
  if (!k) {
    k = crypto.subtle
      .digest("SHA-256", encoder.encode(`edgequeue dashboard v2\n${id}`))
      .then((material) => crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]));
    keys.set(id, k);
  }
  return k;
}

async function sign(entry: TokenEntry, purpose: string, text: string): Promise<string> {
  const sig = await crypto.subtle.sign("HMAC", await key(entry), encoder.encode(`${purpose}\n${text}`));
  return encodeBytes(new Uint8Array(sig));
}

/** newSession: the cookie value for a fresh session of this token: `<expiresAt>.<name>.<nonce>.<signature>`. */
export async function newSession(entry: TokenEntry, now: number): Promise<string> {
  const nonce = encodeBytes(crypto.getRandomValues(new Uint8Array(18)));
  const body = `${now + SESSION_TTL_MS}.${encodeText(entry.principal.name)}.${nonce}`;
  return `${body}.${await sign(entry, "session", body)}`;
}

/** readSession: the session a cookie value proves, or null (absent, forged, expired, or its token gone or changed). */
export async function readSession(entries: readonly TokenEntry[], cookie: string | undefined, now: number): Promise<Session | null> {
  if (!cookie) return null;
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{1,100})\.([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{43})$/.exec(cookie);
  if (!m) return null;
  const name = decodeText(m[2]!);
  const entry = name === null ? null : byName(entries, name);
  if (!entry) return null;
  if (!(await sameSecret(m[4]!, await sign(entry, "session", `${m[1]}.${m[2]}.${m[3]}`)))) return null;
  const expiresAt = Number(m[1]);
  if (expiresAt <= now) return null;
  return { nonce: m[3]!, expiresAt, principal: entry.principal, entry };
}

/** csrfToken: the token this session's forms carry. */
export function csrfToken(session: Session): Promise<string> {
  return sign(session.entry, "csrf", session.nonce);
}
