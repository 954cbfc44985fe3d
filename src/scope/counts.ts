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

/** The `job_count` rows (aliased `c`) of types with pending jobs here, paused ones too. */
const PENDING_COUNT = "c.state = 'pending' AND c.failure_kind = '' AND c.n > 0";
/**
 * The same, paused types (type_pause, scope/pause-gate.ts) left out: nothing of theirs is dispatched or
 * claimed. The one spelling of "pending and not paused": the claim, the dispatcher's due types
 * (claim.ts) and the wake-up (wake.ts) all filter with it.
 */
export const PENDING_UNPAUSED_COUNT = `${PENDING_COUNT} AND c.type NOT IN (SELECT type FROM type_pause)`;
const PENDING_TYPES = `SELECT c.type FROM job_count AS c WHERE ${PENDING_UNPAUSED_COUNT}`;
const PENDING_TYPES_ALL = `SELECT c.type FROM job_count AS c WHERE ${PENDING_COUNT}`;
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
