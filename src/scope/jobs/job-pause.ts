/**
 * Pausing one job (POST /v1/jobs/{id}/pause and /resume; docs/http-api.md "Pause and resume one job"): Cloudflare
 * Workflows' instance pause. A paused job is `waiting` with a `pause` entry in its waits (`wait`), run_at
 * WAIT_FOREVER: it holds no lease, call, permit or attempt, keeps its dedupe key and an ordered type's place, and a
 * resume puts it back to pending at the time it was due (`dueAt`).
 *
 * - A pending job pauses at once.
 * - A running one is asked: its row's `pause_asked` (a running row holds no `wait`: job_wait_check). It
 *   takes effect where the attempt would go back to pending — a retry, sleep, snooze, release or the reap pass
 *   (attempt-end.ts) — or at its next step: that step's journal answer says `paused`, and the handler SDK ends the
 *   attempt there (runtime/steps.ts), unspent. An attempt that completes or fails ends as it would.
 * - A waiting one keeps its waits, with the pause among them: when they end it stays paused
 *   (workflow/wait-entries.ts, resume).
 *
 * @module
 */
import { TRANSITIONS } from "../../job/transitions";
import { jobRows, type JobRow } from "./job-row";
export { PAUSE_VIEW } from "./job-row";
import type { Outcome } from "./outcome";
import { byId, getJob, idSeq } from "./read";
import type { HomeStore } from "./home-store";
import { payCounts } from "./tallies";
import { noteLastTransition } from "./timeline";

/** A waiting job's run_at when none of its waits has a timeout (a paused job's): the latest time a Date can hold. */
export const WAIT_FOREVER = 8_640_000_000_000_000;

/**
 * How a pause entry starts in `wait`, as SQLite's json_object writes it and JSON.stringify of a view does: a wait's
 * name is a JSON string inside its entry, so its quotes are escaped and this text never comes from one.
 */
const PAUSE_MARK = '{"kind":"pause"';
/** SQL: the row's `wait` holds a pause. */
export const PAUSED_SQL = `instr(coalesce(wait, ''), '${PAUSE_MARK}') > 0`;
/** SQL: a pause entry, due at `dueAt` (an SQL expression; a bound number arrives as a real) once resumed. */
const PAUSE_ENTRY = (dueAt: string) => `json_object('kind', 'pause', 'name', 'pause', 'until', NULL, 'dueAt', CAST(${dueAt} AS INTEGER))`;

/** pauseAsked: a running job asked to pause, or a waiting one with a pause among its waits. */
export function pauseAsked(row: Pick<JobRow, "wait" | "pause_asked">): boolean {
  return row.pause_asked === 1 || (row.wait !== null && row.wait.includes(PAUSE_MARK));
}

/** jobPausePending: pending → waiting, paused, due at its run_at once resumed; out of the dispatcher's memory (`held`). */
const JOB_PAUSE_PENDING = `
UPDATE job SET state = '${TRANSITIONS.pause.to}', wait = json_array(${PAUSE_ENTRY("run_at")}), run_at = ${WAIT_FOREVER}, held = 0, updated_at = ?3
 WHERE ${byId("?1", "?2")} AND state = 'pending'
RETURNING *`;
/** jobAskPause: a running job's ask, or a waiting one's pause among its waits. */
const JOB_ASK_PAUSE = `
UPDATE job SET pause_asked = CASE WHEN state = 'running' THEN 1 END,
       wait = CASE WHEN state = 'waiting' THEN json_insert(wait, '$[#]', json(${PAUSE_ENTRY("NULL")})) END, updated_at = ?3
 WHERE ${byId("?1", "?2")} AND state IN ('running', 'waiting') AND pause_asked IS NULL AND NOT (${PAUSED_SQL})
RETURNING *`;
/** jobPauseIfLeased: running → waiting, paused, where the attempt would have gone back to pending (attempt-end.ts). */
const JOB_PAUSE_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.pause.to}', wait = json_array(${PAUSE_ENTRY("?2")}), run_at = ${WAIT_FOREVER}, attempts = ?1, last_error = ?3,
       updated_at = ?4, lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, code_version = ?7, pause_asked = NULL
 WHERE seq = ?5 AND state = 'running' AND lease_token = ?6
RETURNING *`;
/** jobKeepPaused: a paused waiting job whose other waits ended: only the pause is left, due now once resumed. */
const JOB_KEEP_PAUSED = `
UPDATE job SET wait = json_array(${PAUSE_ENTRY("?2")}), run_at = ${WAIT_FOREVER}, updated_at = ?2
 WHERE seq = ?1 AND state = 'waiting' AND ${PAUSED_SQL}
RETURNING *`;
/** jobUnpause: a paused job with nothing else to wait for → pending at the time it was due. */
const JOB_UNPAUSE = `
UPDATE job SET state = '${TRANSITIONS.resume.to}', run_at = coalesce(wait ->> '$[0].dueAt', ?2), wait = NULL, updated_at = ?2
 WHERE seq = ?1 AND state = 'waiting' AND json_array_length(wait) = 1 AND ${PAUSED_SQL}
RETURNING *`;
/** jobDropPause: the ask withdrawn (running), or the pause taken out of a waiting job's other waits. */
const JOB_DROP_PAUSE = `
UPDATE job SET pause_asked = NULL, updated_at = ?2,
       wait = CASE WHEN state = 'waiting' THEN (SELECT json_group_array(json(value)) FROM json_each(job.wait) WHERE value ->> 'kind' IS NOT 'pause') END
 WHERE seq = ?1 AND ((state = 'running' AND pause_asked = 1) OR (state = 'waiting' AND ${PAUSED_SQL}))
RETURNING *`;
/** A pending job of the key that never started: a resumed one that never started either would be a second (job_dedupe_pending_idx). */
const PENDING_UNSTARTED_OF_KEY = "SELECT id FROM job WHERE dedupe_key = ? AND dedupe_key IS NOT NULL AND state = 'pending' AND started_at IS NULL";
const JOB_SUPERSEDE_PAUSED = `
UPDATE job SET state = '${TRANSITIONS.supersede.to}', cancel_reason = ?2, finished_at = ?3, updated_at = ?3, wait = NULL
 WHERE seq = ?1 AND state = 'waiting'
RETURNING *`;

/** What a pause did: `moved`, the job went from pending to paused by this call (an event); else it was asked, or paused already. */
export type PauseOutcome = Outcome<{ row: JobRow; moved: boolean }>;

/** pauseJob: one job paused, or asked to pause; a paused job's pause changes nothing. */
export function pauseJob(store: HomeStore, id: string, now: number): PauseOutcome {
  return store.atomic((): PauseOutcome => {
    const current = getJob(store.sql, id);
    if (!current) return { ok: false, code: "not_found" };
    if (current.finished_at !== null) return { ok: false, code: "already_terminal", state: current.state };
    if (current.state === "pending") {
      // A retry its dispatcher holds owes its count first, as a cancel's does (tallies.ts).
      if (current.held === 1) payCounts(store);
      const row = jobRows(store.sql.exec(JOB_PAUSE_PENDING, id, idSeq(id), now))[0]!;
      noteLastTransition(store.sql, row.seq, "paused");
      store.touched(now);
      return { ok: true, row, moved: true };
    }
    if (pauseAsked(current)) return { ok: true, row: current, moved: false };
    return { ok: true, row: jobRows(store.sql.exec(JOB_ASK_PAUSE, id, idSeq(id), now))[0]!, moved: false };
  });
}

/** resumeJob: a paused job back to pending at the time it was due, a pause taken out of a job's waits, or an ask withdrawn. */
export function resumeJob(store: HomeStore, id: string, now: number): Outcome<{ row: JobRow }> {
  return store.atomic((): Outcome<{ row: JobRow }> => {
    const current = getJob(store.sql, id);
    if (!current) return { ok: false, code: "not_found" };
    if (!pauseAsked(current) || current.finished_at !== null) {
      return { ok: false, code: "conflict", reason: `job is ${current.state} and not paused`, state: current.state };
    }
    if (current.state === "waiting" && current.dedupe_key !== null && current.started_at === null) {
      // It never started, and a newer job of its key is pending meanwhile: that one carries the newer request (as
      // attempt-end.ts supersedes a retry), since a key has one pending job that never started.
      const follower = store.sql.exec<{ id: string }>(PENDING_UNSTARTED_OF_KEY, current.dedupe_key).toArray()[0];
      if (follower) {
        const row = jobRows(store.sql.exec(JOB_SUPERSEDE_PAUSED, current.seq, `superseded by ${follower.id}`, now))[0]!;
        store.hooks.ended(store, [row], now, true);
        store.touched(now);
        return { ok: true, row };
      }
    }
    const unpaused = jobRows(store.sql.exec(JOB_UNPAUSE, current.seq, now))[0];
    if (unpaused) {
      noteLastTransition(store.sql, unpaused.seq, "resumed");
      store.touched(now);
      return { ok: true, row: unpaused };
    }
    return { ok: true, row: jobRows(store.sql.exec(JOB_DROP_PAUSE, current.seq, now))[0]! };
  });
}

/**
 * pauseLeased: a running job asked to pause whose attempt ends back toward pending goes to waiting, paused, instead
 * (attempt-end.ts); `runAt` is when it would have run again, kept as the time it is due once resumed.
 */
export function pauseLeased(store: HomeStore, row: JobRow, end: { runAt: number; attempts: number; error: string | null; note?: string; version?: string | null }, now: number): JobRow | null {
  const after = jobRows(store.sql.exec(JOB_PAUSE_IF_LEASED, end.attempts, end.runAt, end.error, now, row.seq, row.lease_token, end.version ?? null))[0] ?? null;
  const why = end.note ?? end.error;
  if (after) noteLastTransition(store.sql, after.seq, (why ? `paused (${why})` : "paused").slice(0, 500));
  return after;
}

/** keepPaused: a paused job whose other waits ended stays paused (workflow/wait-entries.ts, resume); null when it holds no pause. */
export function keepPaused(store: HomeStore, jobSeq: number, now: number): JobRow | null {
  return jobRows(store.sql.exec(JOB_KEEP_PAUSED, jobSeq, now))[0] ?? null;
}
