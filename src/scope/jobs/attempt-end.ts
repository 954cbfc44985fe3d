/**
 * Ending an attempt that did not complete: back to pending after a backoff
 * while attempts remain, else failed with a kind. Shared by `fail` (a worker
 * reports the error) and the reap pass (the lease ran out), so both count
 * attempts and choose delays the same way (invariant 5).
 *
 * @module
 */
import { hasJournal } from "./read";
import { retryDelayMs, type Backoff } from "../../job/backoff";
import { sqlList, type FailureKind } from "../../job/states";
import { TRANSITIONS } from "../../job/transitions";
import { jobRows, type JobRow } from "./job-row";
import { markHeld, mayHoldRetry } from "./held-retries";
import { HISTORY_APPEND, HISTORY_ROW_MAX, noteLastTransition } from "./timeline";
import { tallyHeld } from "./tallies";
import { pauseAsked, pauseLeased } from "./job-pause";
import type { AttemptError, HomeStore } from "./home-store";
import type { ErrorKind } from "../../job/error-group";

export type AttemptEnd = (
  /** `note`: what its timeline's entry says (a sleep, a release, a wait); the error when none is given. */
  | { to: "pending"; runAt: number; attempts: number; error: string | null; note?: string }
  | { to: "failed"; failureKind: FailureKind; error: string }
) & {
  /** The attempt ended in an error (decideAttemptEnd): its group is counted (hooks `erred`). */
  erred?: AttemptError;
  /**
   * The version of the code that ran the attempt, as its handler reported it: kept as `code_version` and in the
   * timeline entry this end writes (timeline.ts). Absent: none was reported (a lapsed lease, an older SDK).
   */
  version?: string | null;
};

export interface AttemptFailure {
  error: string;
  /** Fail now, whatever attempts remain. */
  fatal: boolean;
  /** false: give the attempt back (a retry that does not count). */
  consumesAttempt: boolean;
  retryAfterMs?: number;
  /** The kind recorded if this was the last attempt. */
  exhaustedKind: FailureKind;
  /** The first frame of the error's stack, when the handler's runtime sent one (its error group: job/error-group.ts). */
  frame?: string | null;
  /** A fatal failure that is a replay no longer matching its journal: failure kind `nondeterminism`. */
  nondeterminism?: boolean;
  /** The version of the code that ran the attempt (AttemptEnd `version`). */
  version?: string | null;
}

/** errorKindOf: an attempt failure's kind, as error groups count it. */
function errorKindOf(f: AttemptFailure): ErrorKind {
  if (f.fatal) return f.nondeterminism ? "nondeterminism" : "fatal";
  return f.exhaustedKind === "stalled" || f.exhaustedKind === "timeout" ? f.exhaustedKind : "error";
}

/** decideAttemptEnd: pure; `row` is the running job whose attempt just ended. */
export function decideAttemptEnd(store: HomeStore, row: JobRow, f: AttemptFailure, now: number): AttemptEnd {
  const erred: AttemptError = { kind: errorKindOf(f), message: f.error, frame: f.frame ?? null };
  const version = f.version ?? null;
  if (f.fatal) return { to: "failed", failureKind: f.nondeterminism ? "nondeterminism" : "fatal", error: f.error, erred, version };
  const attempts = f.consumesAttempt ? row.attempts : Math.max(row.attempts - 1, 0);
  if (f.consumesAttempt && row.attempts >= row.max_attempts) return { to: "failed", failureKind: f.exhaustedKind, error: f.error, erred, version };
  // The job's own backoff (enqueue `backoff`) before its type's.
  const backoff: Backoff = row.backoff !== null ? (JSON.parse(row.backoff) as Backoff) : store.config.typeSettings(row.type).backoff;
  const delay = retryDelayMs(backoff, Math.max(row.attempts, 1), f.retryAfterMs, store.random);
  return { to: "pending", runAt: now + delay, attempts, error: f.error, erred, version };
}

/**
 * jobRetryIfLeased: running → pending, guarded by state and lease token. Primary key lookup. `held` 1: the
 * dispatcher holds the retry, out of job_claim_idx (held-retries.ts), and its `tally` moves: counted by tallyHeld.
 */
const JOB_RETRY_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.attemptRetry.to}', attempts = ?1, run_at = ?2, last_error = ?3, updated_at = ?4,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, held = ?7, tally = tally + ?7, code_version = ?10,
       history = CASE WHEN ?8 = 1 THEN ${HISTORY_APPEND("?4", "'pending'", "?1", "substr(?9, 1, 500)", "started_at", "?10")} ELSE history END
 WHERE seq = ?5 AND state IN (${sqlList(TRANSITIONS.attemptRetry.from)}) AND lease_token = ?6
RETURNING *`;
const HISTORY_LENGTH = "SELECT coalesce(json_array_length(history), 0) AS n FROM job WHERE seq = ?";

/** jobFailIfLeased: running → failed, guarded by state and lease token. Primary key lookup. */
const JOB_FAIL_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.attemptFail.to}', failure_kind = ?, last_error = ?, finished_at = ?, updated_at = ?,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, code_version = ?, pause_asked = NULL
 WHERE seq = ? AND state IN (${sqlList(TRANSITIONS.attemptFail.from)}) AND lease_token = ?
RETURNING *`;

/** jobSupersedeIfLeased: running → cancelled, when a pending follower of its key already covers its work. */
const JOB_SUPERSEDE_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.supersede.to}', cancel_reason = ?, last_error = ?, finished_at = ?, updated_at = ?,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, code_version = ?, pause_asked = NULL
 WHERE seq = ? AND state IN (${sqlList(TRANSITIONS.supersede.from)}) AND lease_token = ?
RETURNING *`;
/** jobPendingOfKey: job_dedupe_pending_idx. */
const JOB_PENDING_OF_KEY = "SELECT id FROM job WHERE dedupe_key = ? AND dedupe_key IS NOT NULL AND state = 'pending'";

/**
 * applyAttemptEnd writes the decision; null if the lease changed meanwhile
 * (cannot happen inside one transaction, but the guard keeps it honest). An
 * attempt that would go back to pending while a follower of its key is already
 * pending is superseded instead (state `superseded`, naming the follower): the follower
 * carries the newer request, and a key has one pending job at most. `mayHold` false: a retry never held by the
 * dispatcher (a give-back, due at once, whose rows no memory notes).
 */
export function applyAttemptEnd(store: HomeStore, row: JobRow, end: AttemptEnd, now: number, mayHold = true): JobRow | null {
  const after = writeAttemptEnd(store, row, end, now, mayHold);
  // Its error is counted in its group, in this same transaction (scope/errors/).
  if (after && end.erred) store.hooks.erred(store, after, end.erred, now);
  return after;
}

function writeAttemptEnd(store: HomeStore, row: JobRow, end: AttemptEnd, now: number, mayHold: boolean): JobRow | null {
  if (end.to === "pending" && row.dedupe_key !== null) {
    const follower = store.sql.exec<{ id: string }>(JOB_PENDING_OF_KEY, row.dedupe_key).toArray()[0];
    // A job with a journal is never superseded: its finished steps' side effects happened, and a follower that
    // started from the top would do them again under new idempotency keys. It goes back to pending and its
    // follower waits behind it (claim.ts, NOT_BEHIND_KEY) — docs/guarantees.md "Keys and journals".
    if (follower && !hasJournal(store.sql, row.seq)) {
      return jobRows(store.sql.exec(JOB_SUPERSEDE_IF_LEASED, `superseded by ${follower.id}`, end.error, now, now, end.version ?? null, row.seq, row.lease_token))[0] ?? null;
    }
  }
  // A running job asked to pause pauses here instead (job-pause.ts), its time to run again kept for its resume.
  if (end.to === "pending" && pauseAsked(row)) return pauseLeased(store, row, end, now);
  if (end.to === "pending") {
    // A pushed retry its dispatcher may hold is held (held-retries.ts); the next instance gives it back if this one goes.
    const held = mayHold && mayHoldRetry(store.pushed.held, row, end.runAt, now) && store.hooks.holdRetry(store, row);
    if (held) markHeld(store.sql, row.seq);
    // Its timeline entry rides in the same update while the row has room (timeline.ts): the trigger leaves it then.
    const inRow = held && store.sql.exec<{ n: number }>(HISTORY_LENGTH, row.seq).one().n < HISTORY_ROW_MAX;
    const note = end.note ?? end.error;
    const after = jobRows(store.sql.exec(JOB_RETRY_IF_LEASED, end.attempts, end.runAt, end.error, now, row.seq, row.lease_token, held ? 1 : 0, inRow ? 1 : 0, note, end.version ?? null))[0] ?? null;
    // The trigger's row gets the note (its own is the error).
    if (after?.state === "pending" && !inRow && end.note !== undefined) noteLastTransition(store.sql, after.seq, end.note.slice(0, 500));
    // Memory learns of the hold here, whichever write this is: a held row no memory knew would wait for the next
    // instance. Should the transaction roll back, the entry is stale the safe way (the restart finds no held row).
    if (after && held) {
      // Counted here, not by the count trigger (its `tally` moved): owed, as the restart's is (tallies.ts).
      tallyHeld(store, after, "held", now);
      store.pushed.held.note(after);
    }
    return after;
  }
  const failed = jobRows(store.sql.exec(JOB_FAIL_IF_LEASED, end.failureKind, end.error, now, now, end.version ?? null, row.seq, row.lease_token))[0] ?? null;
  // What its failure owes (a failure handler, its children's cancels: workflow/failure-handlers.ts), in this same transaction.
  if (failed) store.hooks.failed(store, failed, now);
  return failed;
}
