/**
 * What the pull worker makes of the queue's answers: the refusals no retry can
 * change (a wrong token or URL: start() stops with what to fix), a queue older
 * than a field it sends, and the start-up look at the types it claims
 * (docs/pull-workers.md "Pull workers").
 *
 * @module
 */
import { didYouMean, nearestTypes } from "../config/known-types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

/** preflight: the queue answers this token, and knows the types asked for (a typo is said, not waited on forever). */
export async function preflight(
  call: <T>(method: string, path: string) => Promise<T>,
  types: readonly string[],
  url: string,
  log: (line: Record<string, unknown>) => void,
): Promise<void> {
  let known: string[];
  try {
    known = (await call<{ items: { type: string }[] }>("GET", "/v1/types")).items.map((t) => t.type);
  } catch (e) {
    const refusal = refusedForGood(e, url);
    if (refusal) throw refusal;
    return; // unreachable for now: the claim loop retries and says so
  }
  for (const type of types) {
    if (known.includes(type)) continue;
    const near = nearestTypes(type, known);
    log({ event: "worker:unknown_type", type, message: `the queue neither declares nor has seen ${JSON.stringify(type)}${didYouMean(near)}`, suggestions: near });
  }
}

/**
 * refusedForGood: an answer no retry can change — the queue refused the token (401), or nothing at the URL is a
 * queue (404 on its own API) — as an Error that says what to fix; null for anything worth retrying.
 */
export function refusedForGood(e: unknown, url: string): Error | null {
  if (!(e instanceof ApiError)) return null;
  if (e.status === 401) return new Error(`edgequeue worker: the queue at ${url} refused the token (401 unauthorized): check the token (QUEUE_TOKEN) and the URL`);
  if (e.status === 404 && e.code !== "not_found") return new Error(`edgequeue worker: no edgequeue API at ${url} (HTTP 404): check the URL`);
  return null;
}

/** refusesField: the queue refused a request for naming `field` — a queue older than the field (its strict schema names it). */
export function refusesField(e: unknown, field: string): boolean {
  return e instanceof ApiError && e.code === "invalid_request" && new RegExp(`\\b${field}\\b`).test(e.message);
}
