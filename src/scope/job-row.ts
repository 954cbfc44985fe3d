/**
 * A `job` row as SQLite returns it, and its mapping to the API's Job object.
 * Scope objects return rows (JSON still as text) so the parse work happens in
 * the stateless coordinator, not in the object that serializes every claim.
 *
 * @module
 */
import type { Job, LeasedJob, Scope } from "../job/schemas";
import type { Journal } from "../dispatch/contract";
import type { FailureKind, JobState } from "../job/states";

export type JobRow = {
  seq: number;
  id: string;
  type: string;
  payload: string;
  scope_type: string | null;
  scope_id: string | null;
  state: JobState;
  failure_kind: FailureKind | null;
  priority: number;
  run_at: number;
  attempts: number;
  max_attempts: number;
  timeout_ms: number | null;
  dedupe_key: string | null;
  dedupe_mode: string | null;
  scheduled_for: number | null;
  /** JSON {kind, baseMs, maxMs}, or null: the type's backoff. */
  backoff: string | null;
  tags: string;
  last_error: string | null;
  result: string | null;
  cancel_reason: string | null;
  lease_token: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  lease_ms: number | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
};

/** scopeOfRow: the scope a row's two columns name, or null for an unscoped job (job and schedule rows alike). */
export function scopeOfRow(row: { scope_type: string | null; scope_id: string | null }): Scope | null {
  return row.scope_type !== null && row.scope_id !== null ? { type: row.scope_type, id: row.scope_id } : null;
}

export function toJob(row: JobRow): Job {
  return {
    id: row.id,
    type: row.type,
    payload: JSON.parse(row.payload),
    scope: scopeOfRow(row),
    state: row.state,
    failureKind: row.failure_kind,
    priority: row.priority,
    runAt: row.run_at,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    dedupeKey: row.dedupe_key,
    tags: JSON.parse(row.tags),
    lastError: row.last_error,
    result: row.result === null ? null : JSON.parse(row.result),
    cancelReason: row.cancel_reason,
    dedupeMode: row.dedupe_mode,
    scheduledFor: row.scheduled_for,
    backoff: row.backoff === null ? null : JSON.parse(row.backoff),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** toLeasedJob: a freshly claimed row, with the token the worker must present. */
/** toLeasedJob: a leased row as the claimer sees it, with its journal of durable steps when it has one. */
export function toLeasedJob(row: JobRow & { journal?: Journal }): LeasedJob {
  if (row.lease_token === null || row.lease_expires_at === null) throw new Error(`job ${row.id} has no lease`);
  const leased = { ...toJob(row), leaseToken: row.lease_token, leaseExpiresAt: row.lease_expires_at };
  return row.journal ? { ...leased, journal: row.journal } : leased;
}
