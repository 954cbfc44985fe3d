/**
 * A wait token (docs/workflows.md "Wait tokens"): `<job id>.<name>.<expiry>.<job's creation>.<signature>` — the
 * first two base64url of their UTF-8, the times in base36 (expiry 0: none), the signature the first 16 bytes of
 * an HMAC-SHA256 over the other parts under a key derived from the queue's QUEUE_TOKEN. The job's creation time
 * binds a token to its job: a caller's id used again after its job was deleted names another job, whose tokens
 * differ. The coordinator checks the signature before it calls any object, so a forged token costs no Durable
 * Object a request; the job's object then checks the token is one it made, and completes it once.
 *
 * @module
 */
import { decodeText, encodeText } from "../base64url";
import { macMatches, queueMac } from "./queue-mac";
import type { WaitToken } from "./handler-contract";

export interface TokenParts {
  jobId: string;
  name: string;
  /** Epoch ms, or null for none. */
  expiresAt: number | null;
  /** The job's createdAt. */
  jobCreatedAt: number;
  /** base64url of the signature. */
  signature: string;
}

/** tokenBody: the signed part of a token (everything before the signature). */
function tokenBody(t: Omit<TokenParts, "signature">): string {
  return `${encodeText(t.jobId)}.${encodeText(t.name)}.${(t.expiresAt ?? 0).toString(36)}.${t.jobCreatedAt.toString(36)}`;
}

/** parseToken: a token's parts, or null when it is not of the form (nothing about whether it is real). */
export function parseToken(token: string): TokenParts | null {
  if (typeof token !== "string" || token.length > 2048) return null;
  const parts = token.split(".");
  if (parts.length !== 5 || !/^[0-9a-z]{1,12}$/.test(parts[2]!) || !/^[0-9a-z]{1,12}$/.test(parts[3]!) || !/^[A-Za-z0-9_-]{22}$/.test(parts[4]!)) return null;
  const jobId = decodeText(parts[0]!);
  const name = decodeText(parts[1]!);
  if (jobId === null || name === null || jobId.length === 0 || name.length === 0) return null;
  const exp = parseInt(parts[2]!, 36);
  return { jobId, name, expiresAt: exp === 0 ? null : exp, jobCreatedAt: parseInt(parts[3]!, 36), signature: parts[4]! };
}

/** makeToken: the token of a job's wait named `name`; `publicUrl`: the queue's, for its `url`. */
export async function makeToken(queueToken: string, t: Omit<TokenParts, "signature">, publicUrl: string | null): Promise<WaitToken> {
  const body = tokenBody(t);
  const id = `${body}.${await queueMac(queueToken, "edgequeue wait tokens", body)}`;
  const path = `/v1/tokens/${id}`;
  return { id, name: t.name, path, url: publicUrl === null ? null : `${publicUrl}${path}`, expiresAt: t.expiresAt };
}

/** tokenIsSigned: whether these parts were signed under this QUEUE_TOKEN (compared in constant time). */
export async function tokenIsSigned(queueToken: string, t: TokenParts): Promise<boolean> {
  return macMatches(queueToken, "edgequeue wait tokens", tokenBody(t), t.signature);
}
