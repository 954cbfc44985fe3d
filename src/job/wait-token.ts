/**
 * A wait token's form (docs/workflows.md "Wait tokens"): `<job id>.<name>.<expiry>.<signature>`, the first two
 * base64url of their UTF-8, the expiry in base36 (0: none), the signature the first 16 bytes of an HMAC-SHA256
 * over the other three parts under a key only the job's object holds (scope/wait-tokens.ts). The coordinator reads
 * the job id to route a completion; only the object can tell a real token from a forged one.
 *
 * @module
 */
import { decodeText, encodeText } from "../base64url";

export interface TokenParts {
  jobId: string;
  name: string;
  /** Epoch ms, or null for none. */
  expiresAt: number | null;
  /** base64url of the signature. */
  signature: string;
}

/** tokenBody: the signed part of a token (everything before the signature). */
export function tokenBody(jobId: string, name: string, expiresAt: number | null): string {
  return `${encodeText(jobId)}.${encodeText(name)}.${(expiresAt ?? 0).toString(36)}`;
}

/** parseToken: a token's parts, or null when it is not of the form (nothing about whether it is real). */
export function parseToken(token: string): TokenParts | null {
  if (typeof token !== "string" || token.length > 2048) return null;
  const parts = token.split(".");
  if (parts.length !== 4 || !/^[0-9a-z]{1,12}$/.test(parts[2]!) || !/^[A-Za-z0-9_-]{22}$/.test(parts[3]!)) return null;
  const jobId = decodeText(parts[0]!);
  const name = decodeText(parts[1]!);
  if (jobId === null || name === null || jobId.length === 0 || name.length === 0) return null;
  const exp = parseInt(parts[2]!, 36);
  return { jobId, name, expiresAt: exp === 0 ? null : exp, signature: parts[3]! };
}

/** The path a token is completed at, on the queue's Worker. */
export function tokenPath(token: string): string {
  return `/v1/tokens/${token}`;
}
