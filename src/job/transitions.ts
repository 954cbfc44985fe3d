/**
 * The allowed transitions, as data. Every statement that changes a job's state
 * takes its `WHERE state IN (…)` guard from this table, and
 * `docs/state-machine.md` is checked against it.
 *
 * @module
 */
import { TERMINAL_STATES, type JobState } from "./states";

export interface Transition {
  readonly from: readonly JobState[];
  readonly to: JobState;
  /** What causes it, for the docs. */
  readonly by: string;
}

export const TRANSITIONS = {
  claim: { from: ["pending"], to: "running", by: "claim (pull) or dispatch" },
  complete: { from: ["running"], to: "completed", by: "complete with the lease token" },
  attemptRetry: { from: ["running"], to: "pending", by: "fail with attempts left, the reap pass on an expired lease (backoff), or a handler's snooze" },
  attemptFail: { from: ["running"], to: "failed", by: "fail (fatal, or the last attempt), or the reap pass on the last attempt (stalled / timeout)" },
  wait: { from: ["running"], to: "waiting", by: "a handler's ctx.waitForSignal / waitForToken with nothing to take yet" },
  resume: { from: ["waiting"], to: "pending", by: "the signal or token it waits for arrives, or its timeout passes (due now); a paused job's resume (at the time it was due)" },
  pause: {
    from: ["pending", "running"],
    to: "waiting",
    by: "pause of a pending job (POST /v1/jobs/{id}/pause); a running job asked to pause, at its next step or where its attempt would go back to pending",
  },
  cancel: { from: ["pending", "running", "waiting"], to: "cancelled", by: "cancel (job, scope or dedupe keys)" },
  supersede: {
    from: ["pending", "running", "waiting"],
    to: "superseded",
    by: "an attempt that would go back to pending (fail with attempts left, release, the reap pass) while a follower of its key is already pending (running only); or a newer job of its key enqueued with dedupeMode cancelRunning (any live job) or cancelPending (a pending one not resuming with a journal)",
  },
  expire: { from: ["pending"], to: "expired", by: "its expiry passed before it ever started (the alarm's expiry pass)" },
  retry: { from: ["failed", "cancelled", "superseded", "expired"], to: "pending", by: "manual retry" },
} as const satisfies Record<string, Transition>;


/** The states each bulk action by filter acts on (docs/http-api.md "Bulk actions"): those its transition leaves from. */
export const BULK_ACTS_ON = {
  cancel: TRANSITIONS.cancel.from,
  retry: TRANSITIONS.retry.from,
  // A rerun is a new job made from a finished one (scope/workflow/rerun.ts); the old one does not move.
  rerun: TERMINAL_STATES,
} as const satisfies Record<string, readonly JobState[]>;
export type BulkAction = keyof typeof BULK_ACTS_ON;
