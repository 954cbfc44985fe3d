/**
 * A live subscription (docs/http-api.md "Live subscriptions"): what it follows — one job, the jobs of a type under
 * one dedupe key, or every job of a scope — in the object that holds them, and until when its URL may be opened.
 * Its URL carries it signed: `/v1/subscriptions/<base64url of the JSON>.<signature>`, the signature the first 16
 * bytes of an HMAC-SHA256 under a key derived from the queue's QUEUE_TOKEN (not the key wait tokens use: one kind
 * of token is never the other). A browser opens it without the queue's token, which it must never hold; the
 * coordinator checks the signature and the expiry before any object hears of it, so a forged or stale URL costs no
 * Durable Object a request.
 *
 * @module
 */
import { decodeText, encodeBytes, encodeText } from "../base64url";

export type Follows = { kind: "job"; id: string } | { kind: "key"; type: string; key: string } | { kind: "scope" };

export type Subscription = Follows & {
  /** The object that holds what it follows (docs/design.md "Where a job lives, and its id"). */
  home: string;
  /** The URL may be opened until then (epoch ms); a connection opened in time stays open. */
  exp: number;
};


const keys = new Map<string, Promise<CryptoKey>>();

/** keyOf: each isolate derives the key once per QUEUE_TOKEN. */
function keyOf(queueToken: string): Promise<CryptoKey> {
  let key = keys.get(queueToken);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", new TextEncoder().encode(queueToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
      .then((k) => crypto.subtle.sign("HMAC", k, new TextEncoder().encode("edgequeue subscriptions")))
      .then((material) => crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]));
    keys.set(queueToken, key);
  }
  return key;
}

async function signatureOf(queueToken: string, body: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await keyOf(queueToken), new TextEncoder().encode(body));
  return encodeBytes(new Uint8Array(mac).slice(0, 16));
}

/** signSubscription: the token of a subscription URL (the last part of its path). */
export async function signSubscription(queueToken: string, sub: Subscription): Promise<string> {
  const body = encodeText(JSON.stringify(sub));
  return `${body}.${await signatureOf(queueToken, body)}`;
}

export type Verified = { ok: true; sub: Subscription } | { ok: false; why: string };

/** verifySubscription: the subscription a token carries, when this queue signed it and its URL has not expired. */
export async function verifySubscription(queueToken: string, token: string, now: number): Promise<Verified> {
  const parts = typeof token === "string" && token.length <= 4096 ? token.split(".") : [];
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]{22}$/.test(parts[1]!)) return { ok: false, why: "this is not a subscription URL" };
  const expected = new TextEncoder().encode(await signatureOf(queueToken, parts[0]!));
  const given = new TextEncoder().encode(parts[1]!);
  if (expected.byteLength !== given.byteLength || !crypto.subtle.timingSafeEqual(expected, given)) return { ok: false, why: "this subscription URL was not signed by this queue" };
  const text = decodeText(parts[0]!);
  const sub = text === null ? null : (JSON.parse(text) as Subscription);
  if (!sub || typeof sub.home !== "string" || typeof sub.exp !== "number") return { ok: false, why: "this is not a subscription URL" };
  if (now >= sub.exp) return { ok: false, why: `this subscription URL expired at ${new Date(sub.exp).toISOString()}: ask your backend for a new one` };
  return { ok: true, sub };
}
