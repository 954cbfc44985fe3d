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

const PENDING_TYPES = "SELECT type FROM job_count WHERE state = 'pending' AND failure_kind = '' AND n > 0";
const ALL_COUNTS = "SELECT type, state, failure_kind, n FROM job_count WHERE n > 0";

/** pendingTypes: the types that have at least one pending job here. */
export function pendingTypes(sql: SqlStorage): string[] {
  return sql.exec<{ type: string }>(PENDING_TYPES).toArray().map((r) => r.type);
}

export function allCounts(sql: SqlStorage): CountRow[] {
  return sql.exec<CountRow>(ALL_COUNTS).toArray();
}
