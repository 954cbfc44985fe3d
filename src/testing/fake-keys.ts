/**
 * The fake queue's dedupe keys (fake-queue.ts), by the queue's rules (job/key-mode.ts; docs/guards.md "Keys over
 * time"): which live job a keyed enqueue gets, whether it replaces that job's payload, or whether a new job is made.
 *
 * What the fake leaves out: a job back to pending with a journal (a retry or sleep of a stepped job) counts as running
 * for its key on the queue; the fake has no journal, so it is a pending job here.
 *
 * @module
 */
import { QueueClientError } from "../client/errors";
import type { EnqueueInput } from "../client/producer";
import { baseMode, keyModeOf, replacesPayload, type KeyMode } from "../job/key-mode";
import type { Job } from "../job/schemas";

/** scopeKey: the home a job lives in, as the fake names it. */
export function scopeKey(j: { scope?: { type: string; id: string } | null; type: string }): string {
  return j.scope ? `scope:${j.scope.type}:${j.scope.id}` : `type:${j.type}`;
}

/**
 * keyAnswer: the job a keyed enqueue gets (its payload replaced, for coalescing and debounce), or null when a new one
 * is made. Throws `conflict` for a key live under another mode, or a replacement by another type (the queue's 409).
 */
export function keyAnswer(jobs: readonly Job[], input: EnqueueInput & { dedupeKey: string }, now: number): Job | null {
  const mode = keyModeOf(input);
  const ofKey = jobs.filter((j) => j.dedupeKey === input.dedupeKey && scopeKey(j) === scopeKey(input));
  const live = ofKey.filter((j) => j.state === "pending" || j.state === "running" || j.state === "waiting");
  const other = live.find((j) => baseMode((j.dedupeMode ?? "active") as KeyMode) !== baseMode(mode));
  if (other) {
    throw new QueueClientError("conflict", `dedupe key ${JSON.stringify(input.dedupeKey)} is live under mode ${baseMode((other.dedupeMode ?? "active") as KeyMode)} (job ${other.id}); this enqueue asks for mode ${baseMode(mode)}`, { path: "dedupeKey" }, 409);
  }
  const pending = live.find((j) => j.state === "pending");
  // A waiting job has run and holds its key as a running one does (docs/workflows.md "While a job waits").
  const running = live.find((j) => j.state === "running" || j.state === "waiting");
  if (mode === "cancelRunning" || mode === "cancelPending") {
    // The newest wins (docs/guards.md "Cancel for the newest"): the older jobs the mode ends are superseded.
    for (const j of mode === "cancelRunning" ? live : live.filter((x) => x.state === "pending")) {
      Object.assign(j, { state: "superseded", cancelReason: `superseded by a newer job of its key (${mode})`, finishedAt: now, updatedAt: now });
    }
    return null;
  }
  if (mode === "throttle") {
    const started = ofKey.filter((j) => j.startedAt !== null && j.startedAt >= now - (input.throttleMs ?? 0)).sort((a, b) => b.startedAt! - a.startedAt!);
    return started[0] ?? pending ?? null;
  }
  if (pending) {
    if (!replacesPayload(mode)) return pending;
    if (pending.type !== input.type) {
      throw new QueueClientError("conflict", `dedupe key ${JSON.stringify(input.dedupeKey)} is held by pending job ${pending.id} of type ${pending.type}; mode ${mode} would replace its payload with one for ${input.type}`, { path: "dedupeKey" }, 409);
    }
    // A debounce re-times the job, and its expiry moves with its run time.
    const runAt = mode === "debounce" ? now + (input.debounceMs ?? 0) : pending.runAt;
    const expiresAt = pending.expiresAt === null ? null : pending.expiresAt + (runAt - pending.runAt);
    Object.assign(pending, { payload: JSON.parse(JSON.stringify(input.payload)), runAt, expiresAt, updatedAt: now });
    return pending;
  }
  // A running (or waiting) job only: active mode answers with it; the other modes make one follower behind it.
  if (running && (mode === "active" || mode === "active+latest")) return running;
  return null;
}
