/**
 * The signatures the queue puts in URLs a caller holds without its token — wait tokens (job/wait-token.ts) and
 * subscription URLs (job/subscription.ts): the first 16 bytes of an HMAC-SHA256, base64url, under a key derived
 * from QUEUE_TOKEN for one purpose, so a signature of one kind is never valid as another. Each isolate derives a
 * purpose's key once per QUEUE_TOKEN.
 *
 * @module
 */
import { encodeBytes } from "../base64url";

/** What a key signs: its name is the derivation's input (changing one invalidates every signature of that kind). */
export type MacPurpose = "edgequeue wait tokens" | "edgequeue subscriptions";

const keys = new Map<string, Promise<CryptoKey>>();

function keyOf(queueToken: string, purpose: MacPurpose): Promise<CryptoKey> {
  const id = `${purpose}\n${queueToken}`;
  let key = keys.get(id);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", new TextEncoder().encode(queueToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
      .then((k) => crypto.subtle.sign("HMAC", k, new TextEncoder().encode(purpose)))
      .then((material) => crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]));
    keys.set(id, key);
  }
  return key;
}

/** queueMac: the signature of `body` for `purpose` (22 base64url characters). */
export async function queueMac(queueToken: string, purpose: MacPurpose, body: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await keyOf(queueToken, purpose), new TextEncoder().encode(body));
  return encodeBytes(new Uint8Array(mac).slice(0, 16));
}

/** macMatches: whether `given` is `body`'s signature for `purpose`, compared in constant time. */
export async function macMatches(queueToken: string, purpose: MacPurpose, body: string, given: string): Promise<boolean> {
  const expected = new TextEncoder().encode(await queueMac(queueToken, purpose, body));
  const got = new TextEncoder().encode(given);
  return expected.byteLength === got.byteLength && crypto.subtle.timingSafeEqual(expected, got);
}
