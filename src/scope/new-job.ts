/**
 * prepareJob: from a validated enqueue body to the job its home object
 * inserts — the home chosen (DESIGN.md §2), the id composed, defaults left to
 * the home (it knows the type's settings). Used by the coordinator and by the
 * schedule object, so both place jobs the same way.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { homeFor, jobIdFor, newLocalId } from "../job/home";
import { keyModeOf } from "../job/key-mode";
import type { EnqueueRequest } from "../job/schemas";
import type { NewJob } from "./enqueue";

/**
 * prepareJob: the job as its home takes it. `idMadeUp`: the body's id was derived from one the queue made up (an
 * event emitted without an id), so it leaves no tombstone either (scope/tombstones.ts).
 */
export function prepareJob(
  config: QueueConfig,
  body: EnqueueRequest,
  payloadJson: string,
  now: number,
  scheduledFor: number | null = null,
  idMadeUp = false,
): { home: string; job: NewJob } {
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
      backoff: body.backoff ? JSON.stringify({ kind: body.backoff.kind, baseMs: body.backoff.baseMs, maxMs: body.backoff.maxMs ?? Math.max(body.backoff.baseMs, 300_000) }) : null,
    },
  };
}
