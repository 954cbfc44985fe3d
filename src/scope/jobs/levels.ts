/**
 * The priority levels of pending jobs, walked by index seeks: the due-time
 * questions (what is due, when is the next one, how many are scheduled) are
 * asked per (type, priority) on job_claim_idx (type, priority DESC, run_at, …),
 * one seek per level, so the job table needs no second index on (type,
 * run_at) — every insert and claim wrote an entry in one (docs/design.md "What
 * a job costs"). A type has few levels (most jobs are priority 0).
 *
 * @module
 */

/**
 * levelsCte: the recursive CTE `lv(type, p)` — every priority level of the pending jobs of the types that
 * `typesSql` selects (as column `type`), highest first, one seek each; a type's last row has p NULL.
 * Callers keep `lv.p IS NOT NULL`.
 */
export function levelsCte(typesSql: string): string {
  return `lv(type, p) AS (
  SELECT t.type, (SELECT j.priority FROM job AS j WHERE j.state = 'pending' AND j.held = 0 AND j.type = t.type ORDER BY j.priority DESC LIMIT 1)
    FROM (${typesSql}) AS t
  UNION ALL
  SELECT lv.type, (SELECT j.priority FROM job AS j WHERE j.state = 'pending' AND j.held = 0 AND j.type = lv.type AND j.priority < lv.p ORDER BY j.priority DESC LIMIT 1)
    FROM lv WHERE lv.p IS NOT NULL)`;
}

/**
 * LEVEL_JOB: the pending jobs of one level (`j` of `lv`) — a prefix of job_claim_idx. A retry its object holds
 * (`held`: held-retries.ts) is not among them: its time is in that object's memory, which restarts it.
 */
export const LEVEL_JOB = "j.state = 'pending' AND j.held = 0 AND j.type = lv.type AND j.priority = lv.p";
