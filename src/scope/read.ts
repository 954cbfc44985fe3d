/**
 * Reads: one job by id, and a filtered page in enqueue order (seq), which is
 * what makes the listing cursor stable — a page resumes after a seq, so no job
 * is listed twice.
 *
 * @module
 */
import { LIVE_STATES, sqlList, type FailureKind, type JobState } from "../job/states";
import { jobRows, type JobRow } from "./job-row";

/** jobFindById: unique index job_id_idx. */
const JOB_FIND_BY_ID = "SELECT * FROM job WHERE id = ?";

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
}

export function getJob(sql: SqlStorage, id: string): JobRow | null {
  return jobRows(sql.exec(JOB_FIND_BY_ID, id))[0] ?? null;
}

/** jobsByIds: job_id_idx, one seek per id, in one statement. */
const JOBS_BY_IDS = "SELECT * FROM job WHERE id IN (SELECT value FROM json_each(?))";

/** getJobs: the jobs of these ids that exist here, by id. */
export function getJobs(sql: SqlStorage, ids: readonly string[]): Map<string, JobRow> {
  return new Map(jobRows(sql.exec(JOBS_BY_IDS, JSON.stringify(ids))).map((r) => [r.id, r]));
}

/** liveJobsOfKey: the live jobs holding the key — a pending one, a running one, or both. */
export function liveJobsOfKey(sql: SqlStorage, dedupeKey: string): JobRow[] {
  return jobRows(sql.exec(JOB_FIND_LIVE_BY_DEDUPE_KEY, dedupeKey));
}

export function listJobs(sql: SqlStorage, filter: ListFilter, afterSeq: number, limit: number): JobRow[] {
  const list = (v: readonly string[] | undefined) => (v === undefined ? null : JSON.stringify(v));
  return jobRows(sql.exec(JOB_LIST_AFTER, afterSeq, list(filter.types), list(filter.states), filter.tag ?? null, limit, list(filter.failureKinds), filter.dedupeKey ?? null));
}
