/**
 * Wait tokens, signed and checked by the object that holds the job (docs/workflows.md "Wait tokens"). The key is
 * 32 random bytes made on first use and kept in `meta`, so it never leaves the object and no secret needs
 * configuring; a token is the job id, its name and its expiry, signed (job/wait-token.ts). Signing is Web Crypto,
 * which is asynchronous: a token is made before the transaction that journals it, and checked before the one that
 * completes it.
 *
 * @module
 */
import { encodeBytes } from "../base64url";
import type { WaitToken } from "../job/handler-contract";
import { tokenBody, tokenPath, type TokenParts } from "../job/wait-token";
import { randomHex } from "../random-hex";
import type { HomeStore } from "./home-store";

const KEY_READ = "SELECT value FROM meta WHERE key = 'wait_token_key'";
const KEY_WRITE = "INSERT INTO meta (key, value) VALUES ('wait_token_key', ?) ON CONFLICT (key) DO NOTHING";

/** Each instance imports its key once. */
const keys = new WeakMap<SqlStorage, Promise<CryptoKey>>();

function keyOf(store: HomeStore): Promise<CryptoKey> {
  let key = keys.get(store.sql);
  if (!key) {
    let hex = store.sql.exec<{ value: string }>(KEY_READ).toArray()[0]?.value;
    if (hex === undefined) {
      store.sql.exec(KEY_WRITE, randomHex(32));
      hex = store.sql.exec<{ value: string }>(KEY_READ).one().value;
    }
    const bytes = Uint8Array.from(hex.match(/../g)!.map((b) => parseInt(b, 16)));
    key = crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(store.sql, key);
  }
  return key;
}

async function signatureOf(store: HomeStore, body: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await keyOf(store), new TextEncoder().encode(body));
  return encodeBytes(new Uint8Array(mac).slice(0, 16));
}

/** makeToken: the token of job `jobId` named `name`, expiring at `expiresAt` (null: never). */
export async function makeToken(store: HomeStore, jobId: string, name: string, expiresAt: number | null): Promise<WaitToken> {
  const body = tokenBody(jobId, name, expiresAt);
  const id = `${body}.${await signatureOf(store, body)}`;
  const path = tokenPath(id);
  return { id, name, path, url: store.config.publicUrl === null ? null : `${store.config.publicUrl}${path}`, expiresAt };
}

/** tokenIsReal: whether this object signed these parts (compared in constant time). */
export async function tokenIsReal(store: HomeStore, t: TokenParts): Promise<boolean> {
  const expected = new TextEncoder().encode(await signatureOf(store, tokenBody(t.jobId, t.name, t.expiresAt)));
  const given = new TextEncoder().encode(t.signature);
  return expected.byteLength === given.byteLength && crypto.subtle.timingSafeEqual(expected, given);
}
