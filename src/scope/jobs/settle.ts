/**
 * heartbeat / complete / fail: the calls a lease holder makes. Each is fenced
 * by the lease token and by the lease being unexpired; anything else changes
 * nothing and comes back as a refusal that says why (invariant 3).
 *
 * @module
 */
import { tallyMoved } from "./tallies";
import type { FailOutcome } from "../../job/schemas";
import { sqlList } from "../../job/states";
import { TRANSITIONS } from "../../job/transitions";
import { applyAttemptEnd, decideAttemptEnd } from "./attempt-end";
import { jobRows, type JobRow } from "./job-row";
import type { Outcome, Refusal } from "./outcome";
import { JOB_FIND_LEASED, leased, leaseRefusal } from "./lease";
import { byId, idSeq } from "./read";
import { jsonChunks } from "./json-chunks";
import { keepLogs, ROW_LOGS_SET, rowLogs, shownLines, workerLogLines, type WorkerLogItem } from "./job-logs";
import type { HomeStore } from "./home-store";


/** jobExtendLeaseIfLeased. Params ?1 now, ?2 id, ?3 token, ?4 leaseMs or null (keep the claim's), ?5 idSeq(id). Never past startedAt + timeoutMs. */
const JOB_EXTEND_LEASE_IF_LEASED = `
UPDATE job
   SET lease_ms = coalesce(?4, lease_ms),
       lease_expires_at = CASE WHEN timeout_ms IS NULL THEN ?1 + coalesce(?4, lease_ms)
                               ELSE min(?1 + coalesce(?4, lease_ms), started_at + timeout_ms) END,
       updated_at = ?1
 WHERE ${leased("?5")}
RETURNING lease_expires_at`;

/** jobCompleteIfLeased. Params ?1 now, ?2 id, ?3 token, ?4 result JSON or null, ?5 idSeq(id), ?6 the code's version or null. */
const JOB_COMPLETE_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.complete.to}', result = ?4, finished_at = ?1, updated_at = ?1,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, code_version = ?6, pause_asked = NULL
 WHERE ${leased("?5")} AND state IN (${sqlList(TRANSITIONS.complete.from)})
RETURNING *`;


export function heartbeat(store: HomeStore, id: string, token: string, leaseMs: number | null, now: number): Outcome<{ leaseExpiresAt: number }> {
  const row = store.sql.exec<{ lease_expires_at: number }>(JOB_EXTEND_LEASE_IF_LEASED, now, id, token, leaseMs, idSeq(id)).toArray()[0];
  if (row) return { ok: true, leaseExpiresAt: row.lease_expires_at };
  // The same refusals as complete and fail: a completed or failed job answers already_terminal, whichever call comes late.
  return leaseRefusal(store, id, token, now);
}

/** complete: `version`, the version of the code that ran the attempt (attempt-end.ts, AttemptEnd `version`). */
export function complete(store: HomeStore, id: string, token: string, result: string | null, now: number, version: string | null = null): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    const row = jobRows(store.sql.exec(JOB_COMPLETE_IF_LEASED, now, id, token, store.lens.sealNullable(result), idSeq(id), version))[0];
    if (!row) return leaseRefusal(store, id, token, now);
    store.touched(now);
    return { ok: true, row };
  });
}

/**
 * jobCompleteManyIfLeased: complete for a whole handler call in one statement. Params ?1 now, ?2 JSON
 * [[id, leaseToken, result JSON text or null, idSeq(id), log lines or null, code version or null], …]; each row only under its live lease,
 * as complete. Counted in bulk (tallies.ts: it bumps `tally`); the attempt's lines kept in the row (job-logs.ts).
 */
const JOB_COMPLETE_MANY_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.complete.to}', result = v.value ->> 2, finished_at = ?1, updated_at = ?1,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, tally = tally + 1, code_version = v.value ->> 5, pause_asked = NULL,
       ${ROW_LOGS_SET}
  FROM json_each(?2) AS v
 WHERE ${byId("v.value ->> 0", "v.value ->> 3")} AND job.lease_token = v.value ->> 1 AND job.lease_expires_at > ?1
   AND job.state IN (${sqlList(TRANSITIONS.complete.from)})
RETURNING *`;

/** A completion; `logs`: a pull worker's lines of the attempt, kept only if the completion lands (job-logs.ts). */
export interface CompleteItem {
  id: string;
  token: string;
  result: string | null;
  logs?: readonly WorkerLogItem[];
  /** The version of the code that ran the attempt (attempt-end.ts, AttemptEnd `version`). */
  version?: string | null;
}

/** completeMany: complete each job still under its lease; returns the rows completed (the others changed nothing). */
export function completeMany(store: HomeStore, items: readonly CompleteItem[], now: number): JobRow[] {
  if (items.length === 0) return [];
  return store.atomic(() => {
    const rows: JobRow[] = [];
    // The lines that fit ride in the update; the others go to job_log once it has landed (job-logs.ts).
    const inRow = new Map(items.flatMap((i) => (i.logs ? [[i.id, rowLogs(i.logs, store.lens)] as const] : [])));
    // Sealed before they are measured: a sealed result is about a third longer (sealing/vault.ts).
    const sealed = items.map((i) => ({ ...i, result: store.lens.sealNullable(i.result) }));
    const size = (i: CompleteItem) => (i.result?.length ?? 4) + i.id.length + i.token.length + (i.version?.length ?? 4) + 20 + (inRow.get(i.id)?.size ?? 0);
    for (const part of jsonChunks(sealed, size)) {
      const values = part.map((i) => [i.id, i.token, i.result, idSeq(i.id), inRow.get(i.id)?.values ?? null, i.version ?? null]);
      const done = jobRows(store.sql.exec(JOB_COMPLETE_MANY_IF_LEASED, now, JSON.stringify(values)));
      tallyMoved(store, done, TRANSITIONS.complete.from[0], TRANSITIONS.complete.to, "completed", now);
      rows.push(...done);
    }
    if (rows.length > 0 && items.some((i) => i.logs)) {
      const completed = new Map(rows.map((r) => [r.id, r]));
      for (const i of items) {
        const row = completed.get(i.id);
        if (!row || !i.logs) continue;
        const kept = inRow.get(i.id);
        // Kept in the row: its watchers hear of the lines, as of lines kept in job_log (feed.ts).
        if (kept) store.feed.log(i.id, shownLines(store.lens, row.type, kept.lines.map((l) => (l.attempt === 0 ? { ...l, attempt: row.attempts } : l))));
        else keepLogs(store, i.id, workerLogLines(i.logs, row.attempts));
      }
    }
    if (rows.length > 0) store.touched(now);
    return rows;
  });
}

export interface FailInput {
  error: string;
  retryAfterMs?: number;
  fatal?: boolean;
  consumesAttempt?: boolean;
  /** The first frame of the error's stack (its error group: job/error-group.ts). */
  frame?: string;
  /** Fatal, because the replay no longer matched the journal: failure kind `nondeterminism` (implies `fatal`). */
  nondeterminism?: boolean;
  /** The version of the code that ran the attempt (attempt-end.ts, AttemptEnd `version`). */
  version?: string;
  /** Not an error: a snooze (snoozeLeased), `retryAfterMs` its delay; `error` is not kept. */
  snooze?: boolean;
}

/**
 * snooze: the holder puts the job back to sleep for `delayMs` without
 * spending the attempt (exact delay, no jitter) — "not now", not a failure.
 */
export function snooze(store: HomeStore, id: string, token: string, delayMs: number, now: number, version: string | null = null): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    const leased = jobRows(store.sql.exec(JOB_FIND_LEASED, now, id, token, idSeq(id)))[0];
    if (!leased) return leaseRefusal(store, id, token, now);
    const row = snoozeLeased(store, leased, delayMs, now, version);
    if (!row) return leaseRefusal(store, id, token, now);
    store.touched(now);
    return { ok: true, row };
  });
}

/** snoozeLeased: snooze for a leased row (inside the caller's transaction): no error kept or counted. */
function snoozeLeased(store: HomeStore, leased: JobRow, delayMs: number, now: number, version: string | null): JobRow | null {
  return applyAttemptEnd(store, leased, { to: "pending", runAt: now + delayMs, attempts: Math.max(leased.attempts - 1, 0), error: leased.last_error, version }, now);
}

/**
 * release: the holder gives the job back unrun — pending, due now, its attempt
 * not counted (a worker shutting down, a deploy). A pending follower of its key
 * supersedes it, as for fail.
 */
export function release(store: HomeStore, id: string, token: string, why: string, now: number): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    const leased = jobRows(store.sql.exec(JOB_FIND_LEASED, now, id, token, idSeq(id)))[0];
    if (!leased) return leaseRefusal(store, id, token, now);
    const row = releaseLeased(store, leased, why, now);
    if (!row) return leaseRefusal(store, id, token, now);
    store.touched(now);
    return { ok: true, row };
  });
}

/** releaseLeased: a running row back to pending, due now, unspent (inside the caller's transaction); the timeline says why. */
export function releaseLeased(store: HomeStore, leased: JobRow, why: string, now: number): JobRow | null {
  // Given back unrun: it keeps the code version of the attempt that last ended (none ran now).
  return applyAttemptEnd(store, leased, { to: "pending", runAt: now, attempts: Math.max(leased.attempts - 1, 0), error: leased.last_error, note: `released: ${why}`, version: leased.code_version }, now, false);
}

export function fail(store: HomeStore, id: string, token: string, input: FailInput, now: number): Outcome<{ row: JobRow; outcome: FailOutcome }> {
  return store.atomic(() => {
    const leased = jobRows(store.sql.exec(JOB_FIND_LEASED, now, id, token, idSeq(id)))[0];
    if (!leased) return leaseRefusal(store, id, token, now);
    // A pull worker's snooze (or its pause after a step) is no failure (snoozeLeased); anything else is decided.
    const row = input.snooze ? snoozeLeased(store, leased, input.retryAfterMs ?? 0, now, input.version ?? null) : applyAttemptEnd(store, leased, decideAttemptEnd(
      store,
      leased,
      {
        error: input.error,
        fatal: (input.fatal ?? false) || input.nondeterminism === true,
        consumesAttempt: input.consumesAttempt ?? true,
        retryAfterMs: input.retryAfterMs,
        exhaustedKind: "retries_exhausted",
        frame: input.frame ?? null,
        nondeterminism: input.nondeterminism === true,
        version: input.version ?? null,
      },
      now,
    ), now);
    if (!row) return leaseRefusal(store, id, token, now);
    store.touched(now);
    // What happened, from the row: a retry can turn into a supersede when a follower of the key is pending.
    return { ok: true, row, outcome: row.state === "pending" ? "retry_scheduled" : row.state === "failed" ? "failed" : "superseded" };
  });
}

