/**
 * A job's timeline: creation, each attempt's start and end, manual retries
 * and the final state. Most of it is the job row itself; `job_transition`
 * holds only what the row can no longer tell (migration `job_history_triggers`):
 * attempts that ended back in pending, with when they started, and ends a
 * manual retry undid. A job that succeeds first time has no rows there. A held
 * retry's entry (held-retries.ts) is kept in the row instead (`history`), by the
 * retry's own update — one row written where a transition row was two with its
 * delete — up to HISTORY_ROW_MAX of them; the two places share one numbering
 * (the history trigger counts the row's entries, migration 0042), so they
 * read as one list.
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
  /** A step that ended an attempt: the version of the code that ran it, when one was reported (job.code_version). */
  version?: string | null;
};

type TransitionRow = Omit<TimelineStep, "version"> & { id: number; started_at: number | null; version: string | null };

/** A row keeps at most this many timeline entries; later ones go to job_transition (a job that sleeps in a loop). */
export const HISTORY_ROW_MAX = 16;

/**
 * HISTORY_APPEND: the SET value that appends an entry `[id, at, state, attempt, note, startedAt, version]` to the
 * row's `history`, numbered after job_transition's rows and its own (an UPDATE of `job`; SQL expressions as
 * arguments). `version`: the code version of the attempt it ends (entries written before migration 0045 have none).
 */
export function HISTORY_APPEND(at: string, state: string, attempt: string, note: string, startedAt: string, version: string): string {
  const id = "max((SELECT coalesce(max(t.id), 0) FROM job_transition AS t WHERE t.job_seq = job.seq), coalesce(history ->> '$[#-1][0]', 0)) + 1";
  return `json_insert(coalesce(history, '[]'), '$[#]', json_array(${id}, ${at}, ${state}, ${attempt}, ${note}, ${startedAt}, ${version}))`;
}

const JOB_HISTORY = "SELECT history FROM job WHERE seq = ?";

/** historyRows: the row's entries as transition rows. */
function historyRows(text: string | null): TransitionRow[] {
  if (text === null) return [];
  return (JSON.parse(text) as [number, number, string, number, string | null, number | null, (string | null)?][]).map(([id, at, state, attempt, note, started_at, version]) => ({
    id,
    at,
    state,
    attempt,
    note,
    started_at,
    version: version ?? null,
  }));
}

/** The transition row the history trigger just wrote for the job (job_history_update) gets its note. */
const TRANSITION_NOTE_LAST = "UPDATE job_transition SET note = ?2 WHERE job_seq = ?1 AND id = (SELECT max(id) FROM job_transition WHERE job_seq = ?1)";

/** noteLastTransition: say what the job's latest timeline row was (a sleep, a release, a wait), inside the write that made it. */
export function noteLastTransition(sql: SqlStorage, jobSeq: number, note: string): void {
  sql.exec(TRANSITION_NOTE_LAST, jobSeq, note);
}

/** jobTransitionsNewest: the primary key (job_seq, id) backwards (a job snoozed for a week has thousands). */
const JOB_TRANSITIONS_NEWEST = `
SELECT id, at, state, attempt, note, started_at, version FROM (
  SELECT id, at, state, attempt, note, started_at, version FROM job_transition WHERE job_seq = ?1 ORDER BY id DESC LIMIT ?2)
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
  const table = sql.exec<TransitionRow>(JOB_TRANSITIONS_NEWEST, job.seq, limit).toArray();
  const kept = historyRows(sql.exec<{ history: string | null }>(JOB_HISTORY, job.seq).one().history);
  // Both places, in their one numbering: the newest `limit`.
  const merged = kept.length === 0 ? table : [...table, ...kept].sort((a, b) => a.id - b.id);
  const rows = merged.slice(Math.max(0, merged.length - limit));
  const partial = table.length >= limit || merged.length > limit;
  const counted = table.length < limit ? { n: table.length, s: table.filter((r) => r.started_at !== null).length } : sql.exec<{ n: number; s: number }>(JOB_TRANSITION_COUNT, job.seq).one();
  const all = { n: counted.n + kept.length, s: counted.s + kept.filter((r) => r.started_at !== null).length };
  const omitted = partial ? all.n - rows.length + (all.s - rows.filter((r) => r.started_at !== null).length) + 1 : 0;
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
    // A step that ended an attempt says which code ran it.
    push(r.started_at !== null && r.version !== null ? { at: r.at, state: r.state, attempt: r.attempt, note: r.note, version: r.version } : { at: r.at, state: r.state, attempt: r.attempt, note: r.note });
  }
  if (job.started_at !== null && job.started_at >= last && job.state !== "pending") {
    push({ at: job.started_at, state: "running", attempt: job.attempts, note: null });
  }
  if (job.finished_at !== null) {
    const end = { at: job.finished_at, state: job.state, attempt: job.attempts, note: endNote(job) };
    // A completion or failure ended an attempt and says which code ran it (a cancel may end none).
    push(job.code_version !== null && (job.state === "completed" || job.state === "failed") ? { ...end, version: job.code_version } : end);
  }
  return steps;
}

function endNote(job: JobRow): string | null {
  if (job.state === "failed") return `${job.failure_kind}${job.last_error !== null ? `: ${job.last_error.slice(0, 500)}` : ""}`;
  if (job.state === "cancelled" || job.state === "superseded" || job.state === "expired") return job.cancel_reason;
  return null;
}
