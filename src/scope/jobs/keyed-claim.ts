/**
 * The claim of a keyed type (docs/guards.md "Keyed limits"): its jobs carry the value its keyed limits count
 * them under (`limit_key`), and each value has its own pool objects, so a claim takes one key value's jobs at a
 * time. The keys with due jobs are visited in key order from where the last claim left off, wrapping round —
 * every tenant gets its turn, whatever the backlog of the others; within a key, the usual order (priority,
 * runAt, enqueue order).
 *
 * Everything here reads job_key_claim_idx (type, limit_key, priority DESC, run_at, seq, dedupe_key) WHERE
 * pending and keyed: the next key is one seek, a key's due jobs one range.
 *
 * @module
 */
import { keyedType } from "../../config/limits";
import type { QueueConfig } from "../../config/schema";
import { NOT_BEHIND_KEY } from "./not-behind-key";

type Candidate = { seq: number; priority: number; run_at: number };

const KEYED = "j.state = 'pending' AND j.type = ?1 AND j.limit_key IS NOT NULL";
/** jobNextDueKey: the first key value after ?2 (or from the start, ?2 null) with a due job no running job of its dedupe key holds back. */
const JOB_NEXT_DUE_KEY = `
SELECT j.limit_key AS k FROM job AS j INDEXED BY job_key_claim_idx
 WHERE ${KEYED} AND (?2 IS NULL OR j.limit_key > ?2) AND j.run_at <= ?3 AND ${NOT_BEHIND_KEY}
 ORDER BY j.limit_key LIMIT 1`;
/**
 * jobKeyDue: the best due jobs of one key value, in claim order — one range of the index, no sort; with tags (?5,
 * JSON; a tagged pull claim), only the jobs carrying one of them.
 */
const JOB_KEY_DUE = `
SELECT j.seq, j.priority, j.run_at FROM job AS j INDEXED BY job_key_claim_idx
 WHERE ${KEYED} AND j.limit_key = ?2 AND j.run_at <= ?3 AND ${NOT_BEHIND_KEY}
   AND (?5 IS NULL OR EXISTS (SELECT 1 FROM json_each(j.tags) AS t WHERE t.value IN (SELECT value FROM json_each(?5))))
 ORDER BY j.priority DESC, j.run_at, j.seq LIMIT ?4`;
const JOB_KEY_COUNT_DUE = `SELECT count(*) AS n FROM (${JOB_KEY_DUE})`;

/** nextDueKey: the first key value of the type after `after` (or from the start, null) with a due job; null: none. */
export function nextDueKey(sql: SqlStorage, type: string, now: number, after: string | null): string | null {
  return sql.exec<{ k: string }>(JOB_NEXT_DUE_KEY, type, after, now).toArray()[0]?.k ?? null;
}

/** bestDueOfKey: up to `limit` due jobs of one key value, best first. */
export function bestDueOfKey(sql: SqlStorage, type: string, key: string, limit: number, now: number, tags: string | null = null): Candidate[] {
  return sql.exec<Candidate>(JOB_KEY_DUE, type, key, now, limit, tags).toArray();
}

/** countDueOfKey: due jobs of one key value, counted up to `limit`. */
export function countDueOfKey(sql: SqlStorage, type: string, key: string, now: number, limit: number): number {
  return sql.exec<{ n: number }>(JOB_KEY_COUNT_DUE, type, key, now, limit, null).one().n;
}

/**
 * markKeyedJobs: a type whose limits a deploy made keyed still has pending jobs enqueued without a key. Each
 * instance gives them the empty key when it starts, before it serves anything, so they are claimed (and counted,
 * under "") like the others. Reads the type's pending jobs once per start, as markOrderedJobs does.
 */
const MARK_KEYED = "UPDATE job SET limit_key = '' WHERE state = 'pending' AND held = 0 AND type = ? AND limit_key IS NULL";

export function markKeyedJobs(sql: SqlStorage, config: QueueConfig): void {
  for (const type of Object.keys(config.types)) if (keyedType(config, type)) sql.exec(MARK_KEYED, type);
}
