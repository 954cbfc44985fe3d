/**
 * Reads: one job by id, and a filtered page in enqueue order (seq), which is
 * what makes the listing cursor stable — a page resumes after a seq, so no job
 * is listed twice.
 *
 * @module
 */
import { seqOfJobId } from "../../job/home";
import { LIVE_STATES, sqlList, type FailureKind, type JobState } from "../../job/states";
import { jobRows, type JobRow } from "./job-row";

/**
 * byId: the predicate that finds one job by its id (`id`, an SQL expression) given `seq`, the expression holding
 * seqOfJobId of it: by its seq when the id was made from it — the id compared too, so an id never names a later
 * job that got a deleted one's seq —, else through job_id_idx, which holds only the other ids (`id_seq = 0`).
 */
export function byId(id: string, seq: string, table = "job"): string {
  return `${table}.seq = coalesce(${seq}, (SELECT i.seq FROM job AS i WHERE i.id = ${id} AND i.id_seq = 0)) AND ${table}.id = ${id}`;
}

/** The value a byId `seq` parameter takes for an id. */
export const idSeq = seqOfJobId;

/** jobFindById: byId. */
const JOB_FIND_BY_ID = `SELECT * FROM job WHERE ${byId("?1", "?2")}`;

/** jobFindLiveByDedupeKey: the pending and the running job of a key (at most one each); the WHERE repeats job_dedupe_idx's condition so the partial index applies. */
const JOB_FIND_LIVE_BY_DEDUPE_KEY = `SELECT * FROM job WHERE dedupe_key = ? AND dedupe_key IS NOT NULL AND state IN (${sqlList(LIVE_STATES)})`;

/** jobListAfter: primary key order; filters are optional (NULL = any); lists are JSON arrays. */
const JOB_LIST_AFTER = `
SELECT * FROM job
 WHERE seq > ?1
   AND (?2 IS NULL OR type IN (SELECT value FROM json_each(?2)))
   AND (?3 IS NULL OR state IN (SELECT value FROM json_each(?3)))
   AND (?4 IS NULL OR EXISTS (SELECT 1 FROM json_each(job.tags) WHERE value = ?4))
   AND (?6 IS NULL OR failure_kind IN (SELECT value FROM json_each(?6)))
   AND (?7 IS NULL OR dedupe_key = ?7)
   AND (?8 IS NULL OR created_at > ?8) AND (?9 IS NULL OR created_at < ?9)
   AND (?10 IS NULL OR finished_at > ?10) AND (?11 IS NULL OR finished_at < ?11)
 ORDER BY seq
 LIMIT ?5`;

export interface ListFilter {
  /** Any of these types. */
  types?: readonly string[];
  /** Any of these states. */
  states?: readonly JobState[];
  tag?: string;
  /** Failed jobs of any of these kinds. */
  failureKinds?: readonly FailureKind[];
  dedupeKey?: string;
  /** Created (finished) strictly after / before these times (epoch ms); a job not finished has no finish time to match. */
  createdAfter?: number;
  createdBefore?: number;
  finishedAfter?: number;
  finishedBefore?: number;
}

export function getJob(sql: SqlStorage, id: string): JobRow | null {
  return jobRows(sql.exec(JOB_FIND_BY_ID, id, idSeq(id)))[0] ?? null;
}

/** jobsByIds: one seek per id (by seq, or job_id_idx: byId), in one statement; ?1 JSON [[id, seq or null], …]. */
const JOBS_BY_IDS = `
SELECT * FROM job WHERE seq IN (
  SELECT coalesce(v.value ->> 1, (SELECT i.seq FROM job AS i WHERE i.id = v.value ->> 0 AND i.id_seq = 0)) FROM json_each(?1) AS v)`;

/** getJobs: the jobs of these ids that exist here, by id (a row found by a seq whose id differs is no answer). */
export function getJobs(sql: SqlStorage, ids: readonly string[]): Map<string, JobRow> {
  const wanted = new Set(ids);
  const rows = jobRows(sql.exec(JOBS_BY_IDS, JSON.stringify(ids.map((id) => [id, idSeq(id)]))));
  return new Map(rows.filter((r) => wanted.has(r.id)).map((r) => [r.id, r]));
}

/** liveJobsOfKey: the live jobs holding the key — a pending one, a running one, or both. */
export function liveJobsOfKey(sql: SqlStorage, dedupeKey: string): JobRow[] {
  return jobRows(sql.exec(JOB_FIND_LIVE_BY_DEDUPE_KEY, dedupeKey));
}

export function listJobs(sql: SqlStorage, filter: ListFilter, afterSeq: number, limit: number): JobRow[] {
  const list = (v: readonly string[] | undefined) => (v === undefined ? null : JSON.stringify(v));
  const f = filter;
  const times = [f.createdAfter, f.createdBefore, f.finishedAfter, f.finishedBefore].map((t) => t ?? null);
  return jobRows(sql.exec(JOB_LIST_AFTER, afterSeq, list(f.types), list(f.states), f.tag ?? null, limit, list(f.failureKinds), f.dedupeKey ?? null, ...times));
}

/** In the job's row (scope/workflow/journal-row.ts) or in job_step. */
const JOB_HAS_JOURNAL = "SELECT 1 FROM job WHERE seq = ?1 AND journal IS NOT NULL UNION ALL SELECT 1 FROM job_step WHERE job_seq = ?1 LIMIT 1";

/** hasJournal: whether the job has journaled a step or a sleep (or its start record): it is never superseded (attempt-end.ts), nor replaced by a duplicate of its key (enqueue.ts). */
export function hasJournal(sql: SqlStorage, jobSeq: number): boolean {
  return sql.exec(JOB_HAS_JOURNAL, jobSeq).toArray().length > 0;
}
