/**
 * enqueue: insert new jobs, or return the existing job for a duplicate id or a
 * live dedupe key (invariant 1). A batch is one transaction: all or nothing.
 *
 * @module
 */
import type { Scope } from "../job/schemas";
import type { JobRow } from "./job-row";
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
  timeoutMs: number | null;
  tags: string[];
}

export interface Enqueued {
  row: JobRow;
  created: boolean;
}

/** jobFindById: unique index job_id_idx. */
const JOB_FIND_BY_ID = "SELECT * FROM job WHERE id = ?";
/** jobFindLiveByDedupeKey: unique partial index job_dedupe_idx. */
const JOB_FIND_LIVE_BY_DEDUPE_KEY = "SELECT * FROM job WHERE dedupe_key = ? AND dedupe_key IS NOT NULL AND state IN ('pending', 'running')";
const JOB_INSERT = `
INSERT INTO job (id, type, payload, scope_type, scope_id, state, priority, run_at, attempts, max_attempts,
                 timeout_ms, dedupe_key, tags, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, 0, ?, ?, ?, ?, ?, ?)
RETURNING *`;

export function enqueueJobs(store: ScopeStore, jobs: readonly NewJob[], now: number): Enqueued[] {
  return store.atomic(() => {
    const out: Enqueued[] = [];
    let created = false;
    for (const job of jobs) {
      const existing =
        store.sql.exec<JobRow>(JOB_FIND_BY_ID, job.id).toArray()[0] ??
        (job.dedupeKey === null ? undefined : store.sql.exec<JobRow>(JOB_FIND_LIVE_BY_DEDUPE_KEY, job.dedupeKey).toArray()[0]);
      if (existing) {
        out.push({ row: existing, created: false });
        continue;
      }
      const maxAttempts = job.maxAttempts ?? store.config.typeSettings(job.type).maxAttempts;
      const row = store.sql
        .exec<JobRow>(
          JOB_INSERT,
          job.id,
          job.type,
          job.payload,
          job.scope?.type ?? null,
          job.scope?.id ?? null,
          job.priority,
          job.runAt ?? now + job.delayMs,
          maxAttempts,
          job.timeoutMs,
          job.dedupeKey,
          JSON.stringify(job.tags),
          now,
          now,
        )
        .one();
      out.push({ row, created: true });
      created = true;
    }
    if (created) store.touched(now);
    return out;
  });
}
