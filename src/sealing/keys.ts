/**
 * The queue's encryption keys (docs/operating.md "Encryption at rest"): the
 * secret `EDGEQUEUE_ENCRYPTION_KEYS`, a JSON array of `{ id, key }`, each key
 * 32 bytes in base64. The first seals every new value; every one opens, so a
 * new key goes first and an old one stays listed until nothing sealed with it
 * is kept. A bad value is refused naming the entry and field, and the queue
 * refuses to run on it (503 `misconfigured`) rather than store in the clear
 * what it was told to seal.
 *
 * @module
 */
import { z } from "zod";
import { decodeBytes } from "../base64url";
import { QueueError } from "../errors";

export const KEYS_SECRET = "EDGEQUEUE_ENCRYPTION_KEYS";

/** A key's id is stored beside every value it sealed (vault.ts), so it is short and needs no escaping. */
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export interface SealKey {
  id: string;
  bytes: Uint8Array;
}

const EntrySchema = z.strictObject({
  id: z.string().regex(KEY_ID, "a key id is 1 to 32 letters, digits, '-' or '_' (it is stored beside each value it seals)"),
  key: z.string().min(1, "the key is 32 random bytes in base64 (npx edgequeue keys new makes one)"),
});

/** parseKeys: the keys a secret's text lists, first the one that seals; [] for none. Throws `misconfigured` naming the field. */
export function parseKeys(text: string | undefined): SealKey[] {
  if (text === undefined || text.trim() === "") return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw misconfigured(`${KEYS_SECRET} is not JSON (${(e as Error).message}): it is an array of {"id", "key"}, each key 32 bytes in base64 (npx edgequeue keys new)`);
  }
  const parsed = z.array(EntrySchema).min(1, "list at least one key, or leave the secret unset").max(100).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
    throw misconfigured(`${KEYS_SECRET}${path}: ${issue.message}`);
  }
  const seen = new Set<string>();
  return parsed.data.map((e, i) => {
    if (seen.has(e.id)) throw misconfigured(`${KEYS_SECRET}[${i}].id: "${e.id}" names two keys; a value names the key that sealed it, so each id is one key`);
    seen.add(e.id);
    const bytes = decodeBytes(e.key);
    if (bytes === null) throw misconfigured(`${KEYS_SECRET}[${i}].key: not base64; a key is 32 random bytes in base64 (npx edgequeue keys new)`);
    if (bytes.length !== 32) throw misconfigured(`${KEYS_SECRET}[${i}].key: ${bytes.length} bytes, where AES-256-GCM takes 32 (npx edgequeue keys new makes one)`);
    return { id: e.id, bytes };
  });
}

/** newKey: a fresh entry for the secret (the CLI's `keys new`). */
export function newKey(id: string): { id: string; key: string } {
  if (!KEY_ID.test(id)) throw new Error(`the key id "${id}": 1 to 32 letters, digits, '-' or '_'`);
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return { id, key: btoa(bin) };
}

function misconfigured(message: string): QueueError {
  return new QueueError("misconfigured", message, { setting: KEYS_SECRET });
}
