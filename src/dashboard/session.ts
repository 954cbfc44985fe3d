/**
 * Dashboard sign-in: a token of the queue (auth/tokens.ts) is exchanged for a session cookie naming it, and every
 * state-changing form carries a CSRF token bound to that session.
 *
 * Both are HMACs under a key derived from the queue's own secret, QUEUE_TOKEN, and the signed-in token's SHA-256
 * (what QUEUE_TOKENS holds): the SHA-256 alone, which QUEUE_TOKENS holds and `edgequeue tokens new` prints, signs
 * nothing. Nothing is stored: a session is valid until it expires (SESSION_TTL_MS), or its token is removed or changed,
 * or QUEUE_TOKEN rotates (which signs every session out). The cookie names the token, so each page knows its role (the buttons
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

/** The signing keys, one per secret and token digest, derived once per isolate (every page signs twice: the session check and its CSRF token). */
const keys = new Map<string, Promise<CryptoKey>>();

function key(secret: string, entry: TokenEntry): Promise<CryptoKey> {
  const id = `${secret}\n${encodeBytes(entry.digest)}`;
  let k = keys.get(id);
  if (!k) {
    k = crypto.subtle
      .importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
      .then((root) => crypto.subtle.sign("HMAC", root, encoder.encode(`edgequeue dashboard v2\n${encodeBytes(entry.digest)}`)))
      .then((material) => crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]));
    keys.set(id, k);
  }
  return k;
}

async function sign(secret: string, entry: TokenEntry, purpose: string, text: string): Promise<string> {
  const sig = await crypto.subtle.sign("HMAC", await key(secret, entry), encoder.encode(`${purpose}\n${text}`));
  return encodeBytes(new Uint8Array(sig));
}

/** newSession: the cookie value for a fresh session of this token (`secret`: QUEUE_TOKEN): `<expiresAt>.<name>.<nonce>.<signature>`. */
export async function newSession(secret: string, entry: TokenEntry, now: number): Promise<string> {
  const nonce = encodeBytes(crypto.getRandomValues(new Uint8Array(18)));
  const body = `${now + SESSION_TTL_MS}.${encodeText(entry.principal.name)}.${nonce}`;
  return `${body}.${await sign(secret, entry, "session", body)}`;
}

/** readSession: the session a cookie value proves, or null (absent, forged, expired, or its token gone or changed). */
export async function readSession(secret: string | undefined, entries: readonly TokenEntry[], cookie: string | undefined, now: number): Promise<Session | null> {
  if (!cookie || !secret) return null;
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{1,100})\.([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{43})$/.exec(cookie);
  if (!m) return null;
  const name = decodeText(m[2]!);
  const entry = name === null ? null : byName(entries, name);
  if (!entry) return null;
  if (!(await sameSecret(m[4]!, await sign(secret, entry, "session", `${m[1]}.${m[2]}.${m[3]}`)))) return null;
  const expiresAt = Number(m[1]);
  if (expiresAt <= now) return null;
  return { nonce: m[3]!, expiresAt, principal: entry.principal, entry };
}

/** csrfToken: the token this session's forms carry. */
export function csrfToken(secret: string, session: Session): Promise<string> {
  return sign(secret, session.entry, "csrf", session.nonce);
}
