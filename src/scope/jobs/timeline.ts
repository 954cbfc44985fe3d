/**
 * A job's timeline: creation, each attempt's start and end, manual retries
 * and the final state. Most of it is the job row itself; `job_transition`
 * holds only what the row can no longer tell (migration `job_history_triggers`):
 * attempts that ended back in pending, with when they started, and ends a
 * manual retry undid. A job that succeeds first time has no rows there.
 *
 * @module
 */
import type { JobRow } from "./job-row";
import { getJob } from "./read";

export type TimelineStep = {
  at: number;
  state: string;
  attempt: number;
  note: string | null;
};

type TransitionRow = TimelineStep & { started_at: number | null };

/** The transition row the history trigger just wrote for the job (job_history_update) gets its note. */
const TRANSITION_NOTE_LAST = "UPDATE job_transition SET note = ?2 WHERE job_seq = ?1 AND id = (SELECT max(id) FROM job_transition WHERE job_seq = ?1)";

/** noteLastTransition: say what the job's latest timeline row was (a sleep, a release, a wait), inside the write that made it. */
export function noteLastTransition(sql: SqlStorage, jobSeq: number, note: string): void {
  sql.exec(TRANSITION_NOTE_LAST, jobSeq, note);
}

/** jobTransitionsNewest: the primary key (job_seq, id) backwards (a job snoozed for a week has thousands). */
const JOB_TRANSITIONS_NEWEST = `
SELECT at, state, attempt, note, started_at FROM (
  SELECT id, at, state, attempt, note, started_at FROM job_transition WHERE job_seq = ?1 ORDER BY id DESC LIMIT ?2)
ORDER BY id`;
/** jobTransitionCount: the primary key range of the job. */
const JOB_TRANSITION_COUNT = "SELECT count(*) AS n, count(started_at) AS s FROM job_transition WHERE job_seq = ?";

/**
 * jobTimeline: the job's newest `limit` steps, oldest first, and about how
 * many earlier ones were left out; null when there is no such job.
 */
export function jobTimeline(sql: SqlStorage, id: string, limit: number): { steps: TimelineStep[]; earlier: number } | null {
  const job = getJob(sql, id);
  if (!job) return null;
  const rows = sql.exec<TransitionRow>(JOB_TRANSITIONS_NEWEST, job.seq, limit).toArray();
  const all = rows.length < limit ? null : sql.exec<{ n: number; s: number }>(JOB_TRANSITION_COUNT, job.seq).one();
  const omitted = all ? all.n - rows.length + (all.s - rows.filter((r) => r.started_at !== null).length) + 1 : 0;
  const steps = buildSteps(job, rows, omitted === 0);
  const cut = Math.max(0, steps.length - limit);
  return { steps: steps.slice(cut), earlier: omitted + cut };
}

/** buildSteps: recorded rows between creation (when they reach back that far) and what the row says now. */
function buildSteps(job: JobRow, rows: readonly TransitionRow[], fromCreation: boolean): TimelineStep[] {
  const steps: TimelineStep[] = [];
  let last = -Infinity;
  const push = (s: TimelineStep) => {
    steps.push(s);
    last = s.at;
  };
  if (fromCreation) push({ at: job.created_at, state: "pending", attempt: 0, note: null });
  for (const r of rows) {
    // A start older than the step before it is a stale started_at (the job was pending since): no attempt ran.
    if (r.started_at !== null && r.started_at >= last) push({ at: r.started_at, state: "running", attempt: r.attempt, note: null });
    push({ at: r.at, state: r.state, attempt: r.attempt, note: r.note });
  }
  if (job.started_at !== null && job.started_at >= last && job.state !== "pending") {
    push({ at: job.started_at, state: "running", attempt: job.attempts, note: null });
  }
  if (job.finished_at !== null) push({ at: job.finished_at, state: job.state, attempt: job.attempts, note: endNote(job) });
  return steps;
}

function endNote(job: JobRow): string | null {
  if (job.state === "failed") return `${job.failure_kind}${job.last_error !== null ? `: ${job.last_error.slice(0, 500)}` : ""}`;
  if (job.state === "cancelled" || job.state === "superseded" || job.state === "expired") return job.cancel_reason;
  return null;
}
