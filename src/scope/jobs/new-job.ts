/**
 * prepareJob: from a validated enqueue body to the job its home object
 * inserts — the home chosen (DESIGN.md §2), the id composed, defaults left to
 * the home (it knows the type's settings). Used by the coordinator and by the
 * schedule object, so both place jobs the same way.
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import { homeFor, jobIdFor, newLocalId } from "../../job/home";
import { keyModeOf } from "../../job/key-mode";
import type { EnqueueRequest } from "../../job/schemas";
import { limitKeyOf } from "../../job/limit-key";
import { QueueError } from "../../errors";
import type { NewJob } from "./enqueue";
import { CALLBACK_ON_DEFAULT } from "../../job/callback-url";

/**
 * prepareJob: the job as its home takes it. `idMadeUp`: the body's id was derived from one the queue made up (an
 * event emitted without an id), so it leaves no tombstone either (scope/jobs/tombstones.ts).
 */
export function prepareJob(
  config: QueueConfig,
  body: EnqueueRequest,
  payloadJson: string,
  now: number,
  scheduledFor: number | null = null,
  idMadeUp = false,
): { home: string; job: NewJob } {
  const limitKey = limitKeyFor(config, body);
  const expiresAt = expiresAtOf(body, now);
  const localId = body.id ?? newLocalId(now);
  const home = homeFor({ type: body.type, scope: body.scope, dedupeKey: body.dedupeKey, localId }, config.typeSettings(body.type).shards);
  return {
    home: home.name,
    job: {
      id: jobIdFor(home.name, localId),
      type: body.type,
      payload: payloadJson,
      scope: body.scope ?? null,
      dedupeKey: body.dedupeKey ?? null,
      keyMode: body.dedupeKey === undefined ? null : keyModeOf(body),
      debounceMs: body.debounceMs ?? null,
      throttleMs: body.throttleMs ?? null,
      priority: body.priority ?? 0,
      runAt: body.runAt ?? null,
      delayMs: body.delayMs ?? 0,
      maxAttempts: body.maxAttempts ?? null,
      timeoutMs: body.timeoutMs ?? null,
      tags: body.tags ?? [],
      scheduledFor,
      ownId: body.id !== undefined && !idMadeUp,
      idFromQueue: body.id === undefined,
      limitKey,
      expiresAt,
      trace: body.trace ? JSON.stringify(body.trace) : null,
      callback: body.callback ? JSON.stringify({ url: body.callback.url, on: body.callback.on ?? CALLBACK_ON_DEFAULT }) : null,
      backoff: body.backoff ? JSON.stringify({ kind: body.backoff.kind, baseMs: body.backoff.baseMs, maxMs: body.backoff.maxMs ?? Math.max(body.backoff.baseMs, 300_000) }) : null,
    },
  };
}

/**
 * expiresAtOf: the job's own expiry (epoch ms) or null (its type's `expireAfterMs`, if any, applies in its home).
 * One already past, or before the run time a delay gives, is refused (400, naming the field): it could never run.
 */
function expiresAtOf(body: Pick<EnqueueRequest, "expiresAt" | "expiresInMs" | "runAt" | "delayMs" | "debounceMs">, now: number): number | null {
  const at = body.expiresAt ?? (body.expiresInMs === undefined ? null : now + body.expiresInMs);
  if (at === null) return null;
  const field = body.expiresAt !== undefined ? "expiresAt" : "expiresInMs";
  const runAt = body.runAt ?? now + (body.debounceMs ?? body.delayMs ?? 0);
  const why = at <= now ? `${at} is not in the future (now is ${now})` : at <= runAt ? `${at} is not after the job's run time ${runAt}` : null;
  if (why === null) return at;
  const message = `${why}: the job would expire before it could run`;
  throw new QueueError("invalid_request", `${field}: ${message}`, [{ path: field, message }]);
}

/**
 * limitKeyFor: the value the type's keyed limits count the job under (docs/guards.md "Keyed limits"), or null for a
 * type without one. A job that has none is refused (400, naming the field), as is a concurrencyKey for a type no
 * keyed limit would read it for.
 */
export function limitKeyFor(config: QueueConfig, body: Pick<EnqueueRequest, "type" | "payload" | "scope" | "concurrencyKey">): string | null {
  const path = config.typeSettings(body.type).limitKey;
  if (path === null) {
    if (body.concurrencyKey === undefined) return null;
    const message = `${body.type} has no keyed limit to count the job under (docs/guards.md "Keyed limits")`;
    throw new QueueError("invalid_request", `concurrencyKey: ${message}`, [{ path: "concurrencyKey", message }]);
  }
  const key = limitKeyOf(path, body);
  if (!key.ok) throw new QueueError("invalid_request", `${key.path}: ${key.message}`, [{ path: key.path, message: key.message }]);
  return key.key;
}
