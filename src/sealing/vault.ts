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
 * Sealing and opening are synchronous (@noble/ciphers' AES-GCM, the standard
 * algorithm WebCrypto's opens too): values are sealed inside the write that
 * stores them and opened where a row becomes a view, both inside an object's
 * synchronous transaction or mapping, where WebCrypto's promises cannot go.
 *
 * @module
 */
import { gcm } from "@noble/ciphers/aes.js";
import { decodeBytes, encodeBytes } from "../base64url";
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
    if (!key) throw new SealError(`a value sealed with key "${id}", which ${KEYS_SECRET} does not list (keep an old key listed until nothing it sealed is kept)`);
    try {
      return decoder.decode(gcm(key, decodeBytes(iv!)!).decrypt(decodeBytes(ct!)!));
    } catch {
      throw new SealError(`a value sealed with key "${id}" does not open with it: the stored bytes were changed, or the key listed under that id is not the one that sealed it`);
    }
  }

  private sealToString(json: string): string {
    const key = this.keys[0]!;
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = gcm(key.bytes, iv).encrypt(encoder.encode(json));
    return `${PREFIX}${key.id}:${encodeBytes(iv)}:${encodeBytes(ct)}`;
  }
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
