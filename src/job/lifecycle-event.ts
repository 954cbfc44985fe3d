/**
 * A job's lifecycle event as the observer and the log lines tell it (docs/operating.md): the vocabulary, kept apart
 * from the scope object that makes them (scope/watching/events.ts), so the SDK's types need none of its code.
 *
 * @module
 */
import type { Scope } from "./schemas";
import type { FailureKind } from "./states";

export type LifecycleEventName = "job:started" | "job:completed" | "job:retry_scheduled" | "job:waiting" | "job:failed" | "job:cancelled" | "job:superseded" | "job:expired" | "job:released" | "job:lease_lost" | "job:progress";

export interface LifecycleEvent {
  event: LifecycleEventName;
  at: number;
  id: string;
  type: string;
  scope: Scope | null;
  attempt: number;
  maxAttempts: number;
  /** retry_scheduled: when it runs again; waiting: its earliest timeout. */
  runAt?: number;
  /** waiting: what it waits for (docs/workflows.md). */
  waitingFor?: { kind: string; name: string; until: number | null }[];
  error?: string | null;
  failureKind?: FailureKind;
  /** completed / failed: from the attempt's start. */
  durationMs?: number;
  reason?: string | null;
  /** progress: the value the holder reported (job/progress.ts). */
  progress?: unknown;
  /** lease_lost: the holder's write that was refused (heartbeat, complete, fail, release, sleep, step, progress). */
  write?: string;
}

