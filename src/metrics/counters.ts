/**
 * The per-minute counters every scope object keeps (in the transaction that
 * changes a job: by trigger, and by enqueue once per type per batch) and the
 * catalog rolls up: their names, in
 * the order SQL, JSON and Prometheus list them.
 *
 * @module
 */

export const COUNTERS = ["enqueued", "started", "completed", "failed", "retried", "cancelled"] as const;
export type CounterName = (typeof COUNTERS)[number];
export type Counters = Record<CounterName, number>;

/** One type's counts in one minute (`minute`: epoch ms of its start). */
export type MinuteCounters = Counters & { minute: number; type: string };

export const MINUTE_MS = 60_000;

export function minuteOf(t: number): number {
  return Math.floor(t / MINUTE_MS) * MINUTE_MS;
}

export function zeroCounters(): Counters {
  return { enqueued: 0, started: 0, completed: 0, failed: 0, retried: 0, cancelled: 0 };
}

/** What each counter counts, for docs, the OpenAPI document and Prometheus HELP lines. */
export const COUNTER_HELP: Record<CounterName, string> = {
  enqueued: "jobs created",
  started: "attempts started (leased by a pull worker or dispatched to a handler)",
  completed: "jobs completed",
  failed: "jobs failed for good (retries exhausted, fatal, stalled or timed out on the last attempt)",
  retried: "jobs sent back to pending: an attempt that will be retried, or a manual retry",
  cancelled: "jobs cancelled (by a caller, a scope cancel, superseded by a newer job of their key, or expired before they started)",
};
