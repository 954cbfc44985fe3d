/**
 * Reads of `job_count`, the per (type, state, failure kind) tallies that
 * triggers keep in step with `job`.
 *
 * @module
 */
import type { FailureKind, JobState } from "../job/states";

export type CountRow = {
  type: string;
  state: JobState;
  failure_kind: FailureKind | "";
  n: number;
};

/** Paused types (type_pause, scope/pause-gate.ts) are left out: nothing of theirs is dispatched or claimed. */
const PENDING_TYPES = "SELECT type FROM job_count WHERE state = 'pending' AND failure_kind = '' AND n > 0 AND type NOT IN (SELECT type FROM type_pause)";
const PENDING_TYPES_ALL = "SELECT type FROM job_count WHERE state = 'pending' AND failure_kind = '' AND n > 0";
const ALL_COUNTS = "SELECT type, state, failure_kind, n FROM job_count WHERE n > 0";

/** pendingTypes: the types that have at least one pending job here and are not paused. */
export function pendingTypes(sql: SqlStorage): string[] {
  return sql.exec<{ type: string }>(PENDING_TYPES).toArray().map((r) => r.type);
}

/** pendingTypesAll: the same, paused ones too (a paused type's pending work still holds its waitsFor waiters). */
export function pendingTypesAll(sql: SqlStorage): string[] {
  return sql.exec<{ type: string }>(PENDING_TYPES_ALL).toArray().map((r) => r.type);
}

export function allCounts(sql: SqlStorage): CountRow[] {
  return sql.exec<CountRow>(ALL_COUNTS).toArray();
}
