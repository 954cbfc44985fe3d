/**
 * The queue's tokens (docs/operating.md "Tokens and roles"): the secret `QUEUE_TOKENS`, a JSON array of
 * `{ name, role, sha256, types?, scopeTypes? }` — `sha256` the hex SHA-256 of the token, so the secret holds no
 * token itself — and `QUEUE_TOKEN` alone, an admin named `admin`, as before. A bad entry fails every call with a
 * message naming the setting and the field (as a bad config does): the queue never runs with tokens it misread.
 *
 * @module
 */
import { z } from "zod";
import { QueueError } from "../errors";
import { ROLES, type Role } from "./roles";

/** Who a call is: a token's name and role, and the job types and scope types it is limited to (null: any). */
export interface Principal {
  name: string;
  role: Role;
  types: readonly string[] | null;
  scopeTypes: readonly string[] | null;
}

/** The trusted caller of the RPC entrypoint: a Worker the queue's owner bound to it (docs/producers.md "RPC"). */
export const SERVICE_BINDING: Principal = { name: "service binding", role: "admin", types: null, scopeTypes: null };

const nameList = (what: string) => z.array(z.string().min(1).max(128)).min(1, `give at least one ${what}, or leave the field out`).max(100);

const TokenEntrySchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, "a token's name is 1-64 characters of A-Z a-z 0-9 . _ @ -"),
  role: z.enum(ROLES, { error: `a role is one of ${ROLES.join(", ")}` }),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, "the hex SHA-256 of the token (64 hex digits): `printf %s \"$TOKEN\" | sha256sum`"),
  types: nameList("job type").optional(),
  scopeTypes: nameList("scope type").optional(),
});

export interface TokenEntry {
  principal: Principal;
  /** The SHA-256 of the token itself. */
  digest: Uint8Array;
}

const encoder = new TextEncoder();

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

const cache = new Map<string, Promise<TokenEntry[]>>();

/** tokensOf: the tokens the env configures (parsed once per isolate and value); throws `misconfigured` naming the field. */
export function tokensOf(env: { QUEUE_TOKEN?: string; QUEUE_TOKENS?: string }): Promise<TokenEntry[]> {
  const key = `${env.QUEUE_TOKENS ?? ""}\n${env.QUEUE_TOKEN ?? ""}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = parseTokens(env.QUEUE_TOKENS, env.QUEUE_TOKEN);
    // A refusal is not kept: the next call parses again (and fails again, naming the same field).
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
  }
  return hit;
}

/** parseTokens: QUEUE_TOKENS' entries, then QUEUE_TOKEN as the admin `admin` when set. */
export async function parseTokens(tokensJson: string | undefined, legacy: string | undefined): Promise<TokenEntry[]> {
  const entries: TokenEntry[] = [];
  if (tokensJson !== undefined && tokensJson.trim() !== "") {
    let raw: unknown;
    try {
      raw = JSON.parse(tokensJson);
    } catch (e) {
      throw misconfigured(`QUEUE_TOKENS is not JSON (${(e as Error).message}): it is an array of {"name", "role", "sha256", "types"?, "scopeTypes"?}`);
    }
    const parsed = z.array(TokenEntrySchema).min(1, "list at least one token").max(1000).safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
      throw misconfigured(`QUEUE_TOKENS${path}: ${issue.message}`);
    }
    const seen = new Set<string>();
    for (const [i, t] of parsed.data.entries()) {
      if (seen.has(t.name)) throw misconfigured(`QUEUE_TOKENS[${i}].name: "${t.name}" names two tokens; each token has its own name (the audit list records it)`);
      seen.add(t.name);
      entries.push({ principal: { name: t.name, role: t.role, types: t.types ?? null, scopeTypes: t.scopeTypes ?? null }, digest: fromHex(t.sha256.toLowerCase()) });
    }
  }
  if (legacy !== undefined && legacy !== "") {
    if (entries.some((e) => e.principal.name === "admin")) throw misconfigured(`QUEUE_TOKENS names a token "admin", the name QUEUE_TOKEN's token has; rename it or drop QUEUE_TOKEN`);
    entries.push({ principal: { name: "admin", role: "admin", types: null, scopeTypes: null }, digest: await sha256(legacy) });
  }
  return entries;
}

function misconfigured(message: string): QueueError {
  return new QueueError("misconfigured", message, { setting: message.startsWith("QUEUE_TOKENS") ? "QUEUE_TOKENS" : "QUEUE_TOKEN" });
}

/**
 * identify: the principal a presented token is, or null. Each configured digest is compared in constant time with
 * the presented token's, and every one is compared (no early exit), so the answer's time says nothing of which.
 */
export async function identify(entries: readonly TokenEntry[], token: string): Promise<Principal | null> {
  const given = await sha256(token);
  let found: Principal | null = null;
  for (const e of entries) if (crypto.subtle.timingSafeEqual(given, e.digest) && found === null) found = e.principal;
  return found;
}

/** byName: the configured token of this name (a dashboard session names its token). */
export function byName(entries: readonly TokenEntry[], name: string): TokenEntry | null {
  return entries.find((e) => e.principal.name === name) ?? null;
}
