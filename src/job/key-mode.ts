/**
 * How a dedupe key behaves over time (durabl's dedupe scopes and coalescing,
 * plus debounce and throttle). One key lives under one mode at a time —
 * `active`, `pending`, debounce or throttle: a key live under another mode is
 * refused (409), because two modes on one key would each assume an exclusion
 * the other does not give. Coalescing is not part of that: it is a property of
 * the call, as in durabl — a duplicate enqueued with `coalesce: "latest"`
 * replaces the pending job's payload whichever way that job was enqueued.
 *
 * - `active` (default): one pending-or-running job per key; a duplicate gets it.
 * - `pending`: one pending follower may wait behind one running job.
 * - `+latest` (`coalesce: "latest"`): a duplicate replaces the pending job's
 *   payload (never a running job's).
 * - `debounce` (`debounceMs`): a duplicate replaces the payload and pushes the
 *   pending job's runAt to now + debounceMs: a burst runs once, with the last payload.
 * - `throttle` (`throttleMs`): once a job of the key has started, duplicates
 *   within the window get that job and create nothing.
 * - `cancelRunning`: the newest wins — a new job ends every live job of the key
 *   (`superseded`, a running one's handler aborted) and runs instead.
 * - `cancelPending`: a running job is kept; a new job ends the key's pending
 *   ones (`superseded`) and waits behind it (scope/jobs/key-cancel.ts).
 *
 * In every mode a job never runs beside another live job of its key: a
 * follower waits until the running one ends.
 *
 * @module
 */

export type KeyMode = "active" | "active+latest" | "pending" | "pending+latest" | "debounce" | "throttle" | "cancelRunning" | "cancelPending";

export interface KeyOptions {
  dedupeMode?: "active" | "pending" | "cancelRunning" | "cancelPending";
  coalesce?: "latest";
  debounceMs?: number;
  throttleMs?: number;
}

export function keyModeOf(o: KeyOptions): KeyMode {
  if (o.throttleMs !== undefined) return "throttle";
  if (o.debounceMs !== undefined) return "debounce";
  const base = o.dedupeMode ?? "active";
  if (base === "cancelRunning" || base === "cancelPending") return base;
  return o.coalesce === "latest" ? `${base}+latest` : base;
}

/** baseMode: the mode a key must match — coalescing left out (each call chooses it for itself). */
export function baseMode(mode: KeyMode): KeyMode {
  return mode === "active+latest" ? "active" : mode === "pending+latest" ? "pending" : mode;
}

/** replacesPayload: a duplicate's payload wins over the pending job's. */
export function replacesPayload(mode: KeyMode): boolean {
  return mode === "active+latest" || mode === "pending+latest" || mode === "debounce";
}
