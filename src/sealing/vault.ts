/**
 * Sealing a value for storage, and opening it again (docs/operating.md
 * "Encryption at rest"). A sealed value is a JSON string,
 * `"$sealed:v1:<key id>:<iv>:<ciphertext>"` (AES-256-GCM, a random 96-bit iv,
 * base64url; the ciphertext ends with its 16-byte tag), whose plaintext is
 * the value's JSON text. Being a JSON string, it stays valid JSON wherever the
 * value was: a column SQLite's json functions read, a child's result copied
 * into its parent's journal, an event's payload inside a wait's answer — so
 * the statements and triggers that move values move them sealed, unchanged.
 *
 * Two implementations of the one algorithm (AES-GCM; a value either seals opens
 * with the other): the platform's native WebCrypto, asynchronous, for the job
 * path — values sealed before they reach an object, opened after they leave it
 * (sealing/lens.ts) —, and @noble/ciphers', synchronous, about five times the
 * CPU, for what must happen inside an object's transaction or a synchronous
 * mapping (a failure handler's payload, a subscription's message).
 *
 * @module
 */
import { gcm } from "@noble/ciphers/aes.js";
import { decodeBytes, encodeBytes } from "../base64url";
import { utf8Length } from "../job/json-size";
import { parseKeys, KEYS_SECRET, type SealKey } from "./keys";

const PREFIX = "$sealed:v1:";
/** A sealed string as it stands in JSON text: a value's text is sealed when it starts so. */
const QUOTED = `"${PREFIX}`;
const SEALED = /^\$sealed:v1:([A-Za-z0-9_-]{1,32}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]+)$/;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A value that could not be opened: its key is no longer listed, or the bytes are not what the key sealed. */
export class SealError extends Error {
  override readonly name = "SealError";
}

export class Vault {
  /** Whether values are sealed: the secret lists a key. */
  readonly on: boolean;
  private readonly byId: Map<string, Uint8Array>;

  constructor(private readonly keys: readonly SealKey[]) {
    this.on = keys.length > 0;
    this.byId = new Map(keys.map((k) => [k.id, k.bytes]));
  }

  /** sealText: a value's JSON text as stored — sealed with the first key; unchanged when no key is listed or it is sealed already. */
  sealText(json: string): string {
    if (!this.on || json.startsWith(QUOTED)) return json;
    return JSON.stringify(this.sealToString(json));
  }

  sealNullable(json: string | null): string | null {
    return json === null ? null : this.sealText(json);
  }

  /** sealString: a plain string (a log line's message) as stored: the sealed string of its JSON; unchanged with no key. */
  sealString(text: string): string {
    if (!this.on || text.startsWith(PREFIX)) return text;
    return this.sealToString(JSON.stringify(text));
  }

  /** isSealed: a string is a sealed value (the form, not whether a key opens it). */
  static isSealed(s: string): boolean {
    return s.startsWith(PREFIX) && SEALED.test(s);
  }

  /** openString: the JSON text a sealed string holds. Throws SealError when its key is not listed or it does not open. */
  openString(sealed: string): string {
    const m = SEALED.exec(sealed);
    if (!m) throw new SealError("not a sealed value");
    const [, id, iv, ct] = m;
    const key = this.byId.get(id!);
    if (!key) throw unlisted(id!);
    try {
      return decoder.decode(gcm(key, decodeBytes(iv!)!).decrypt(decodeBytes(ct!)!));
    } catch {
      throw changed(id!);
    }
  }

  /** sealTextAsync: sealText with native AES-GCM (WebCrypto). */
  async sealTextAsync(json: string): Promise<string> {
    if (!this.on || json.startsWith(QUOTED)) return json;
    return JSON.stringify(await this.sealToStringAsync(json));
  }

  /** openStringAsync: openString with native AES-GCM. */
  async openStringAsync(sealed: string): Promise<string> {
    const m = SEALED.exec(sealed);
    if (!m) throw new SealError("not a sealed value");
    const [, id, iv, ct] = m;
    if (!this.byId.has(id!)) throw unlisted(id!);
    try {
      return decoder.decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: decodeBytes(iv!)! }, await this.cryptoKey(id!), decodeBytes(ct!)!));
    } catch {
      throw changed(id!);
    }
  }

  private readonly cryptoKeys = new Map<string, Promise<CryptoKey>>();

  private cryptoKey(id: string): Promise<CryptoKey> {
    let key = this.cryptoKeys.get(id);
    if (!key) this.cryptoKeys.set(id, (key = crypto.subtle.importKey("raw", this.byId.get(id)!, "AES-GCM", false, ["encrypt", "decrypt"])));
    return key;
  }

  private async sealToStringAsync(json: string): Promise<string> {
    const key = this.keys[0]!;
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await this.cryptoKey(key.id), encoder.encode(json)));
    return `${PREFIX}${key.id}:${encodeBytes(iv)}:${encodeBytes(ct)}`;
  }

  private sealToString(json: string): string {
    const key = this.keys[0]!;
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = gcm(key.bytes, iv).encrypt(encoder.encode(json));
    return `${PREFIX}${key.id}:${encodeBytes(iv)}:${encodeBytes(ct)}`;
  }
}

function unlisted(id: string): SealError {
  return new SealError(`a value sealed with key "${id}", which ${KEYS_SECRET} does not list (keep an old key listed until nothing it sealed is kept)`);
}

function changed(id: string): SealError {
  return new SealError(`a value sealed with key "${id}" does not open with it: the stored bytes were changed, or the key listed under that id is not the one that sealed it`);
}

/** NO_KEYS: the vault of a queue that seals nothing (it still opens nothing; a sealed value found says which key it needs). */
export const NO_KEYS = new Vault([]);

const vaults = new Map<string, Vault>();

/** vaultOf: the env's vault, built once per isolate and secret; throws `misconfigured` naming the field of a bad secret. */
export function vaultOf(env: { EDGEQUEUE_ENCRYPTION_KEYS?: string }): Vault {
  const text = env.EDGEQUEUE_ENCRYPTION_KEYS;
  if (text === undefined || text.trim() === "") return NO_KEYS;
  let hit = vaults.get(text);
  if (!hit) {
    hit = new Vault(parseKeys(text));
    vaults.set(text, hit);
  }
  return hit;
}

const SEALED_IN_TEXT = /"\$sealed:v1:[A-Za-z0-9_-]{1,32}:[A-Za-z0-9_-]{16}:([A-Za-z0-9_-]+)"/g;

/**
 * plainBytes: a stored value's size as its plain JSON would be, in UTF-8 bytes — what the limits count
 * (`limits.payloadMaxBytes`, `limits.journalMaxBytes`), so a value is refused or kept alike with keys and without.
 * Each sealed string in it counts as the JSON it holds (its ciphertext, less the 16-byte tag).
 */
export function plainBytes(text: string, limit: number): number {
  if (!text.includes(PREFIX)) return utf8Length(text, limit);
  let stored = 0;
  let plain = 0;
  for (const m of text.matchAll(SEALED_IN_TEXT)) {
    stored += m[0].length;
    plain += Math.floor((m[1]!.length * 3) / 4) - 16;
  }
  return utf8Length(text, limit + stored) - stored + plain;
}
