/**
 * enqueue: insert new jobs, or return the existing job for a duplicate id or a
 * live dedupe key (invariant 1). A batch is one transaction: all or nothing.
 *
 * @module
 */
import type { Scope } from "../job/schemas";
import type { JobRow } from "./job-row";
import { getJob, liveJobWithDedupeKey } from "./read";
import type { ScopeStore } from "./store";

/** A validated job on its way into its home; the coordinator has already composed the id. */
export interface NewJob {
  id: string;
  type: string;
  /** JSON text, already size-checked. */
  payload: string;
  scope: Scope | null;
  dedupeKey: string | null;
  priority: number;
  /** Absolute due time; when null, now + delayMs. */
  runAt: number | null;
  delayMs: number;
  /** null: the type's configured maxAttempts. */
  maxAttempts: number | null;
  /** null: the type's configured timeoutMs, if any. */
  timeoutMs: number | null;
  tags: string[];
}

export interface Enqueued {
  row: JobRow;
  created: boolean;
}

/**
 * jobInsertIfNew: the unique indexes on id (job_id_idx) and on a live dedupe
 * key (job_dedupe_idx) decide; a conflict inserts nothing and returns no row,
 * so the common case is one statement per job.
 */
const JOB_INSERT_IF_NEW = `
INSERT INTO job (id, type, payload, scope_type, scope_id, state, priority, run_at, attempts, max_attempts,
                 timeout_ms, dedupe_key, tags, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, 0, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING
RETURNING *`;

export function enqueueJobs(store: ScopeStore, jobs: readonly NewJob[], now: number): Enqueued[] {
  return store.atomic(() => {
    const out: Enqueued[] = [];
    let created = false;
    for (const job of jobs) {
      const settings = store.config.typeSettings(job.type);
      const row = store.sql
        .exec<JobRow>(
          JOB_INSERT_IF_NEW,
          job.id,
          job.type,
          job.payload,
          job.scope?.type ?? null,
          job.scope?.id ?? null,
          job.priority,
          job.runAt ?? now + job.delayMs,
          job.maxAttempts ?? settings.maxAttempts,
          job.timeoutMs ?? settings.timeoutMs,
          job.dedupeKey,
          JSON.stringify(job.tags),
          now,
          now,
        )
        .toArray()[0];
      if (row) {
        out.push({ row, created: true });
        created = true;
        continue;
      }
      const existing = getJob(store.sql, job.id) ?? (job.dedupeKey === null ? null : liveJobWithDedupeKey(store.sql, job.dedupeKey));
      if (!existing) throw new Error(`enqueue of ${job.id} conflicted with no job`);
      out.push({ row: existing, created: false });
    }
    if (created) store.touched(now);
    return out;
  });
}
