/**
 * Reads of `type_count`, each type's live counts per state, kept in step with
 * `job` by trigger and by the statements that count their own (tallies.ts).
 *
 * @module
 */
import type { FailureKind, JobState } from "../../job/states";
import { STATE_COLUMNS } from "./tallies";

export type CountRow = {
  type: string;
  state: JobState;
  failure_kind: FailureKind | "";
  n: number;
};

/** The `type_count` rows (aliased `c`) of types with pending jobs here, paused ones too. */
const PENDING_COUNT = "c.pending > 0";
/**
 * The same, paused types (type_pause, scope/jobs/pause-gate.ts) left out: nothing of theirs is dispatched or
 * claimed. The one spelling of "pending and not paused": the claim, the dispatcher's due types
 * (claim.ts) and the wake-up (wake.ts) all filter with it.
 */
export const PENDING_UNPAUSED_COUNT = `${PENDING_COUNT} AND c.type NOT IN (SELECT type FROM type_pause)`;
const PENDING_TYPES = `SELECT c.type FROM type_count AS c WHERE ${PENDING_UNPAUSED_COUNT}`;
const PENDING_TYPES_ALL = `SELECT c.type FROM type_count AS c WHERE ${PENDING_COUNT}`;
const ALL_COUNTS = `SELECT type, ${STATE_COLUMNS.join(", ")} FROM type_count`;

/** pendingOfType: the type's pending jobs here (its type_count row, one row read). */
export function pendingOfType(sql: SqlStorage, type: string): number {
  return sql.exec<{ n: number }>("SELECT coalesce(sum(pending), 0) AS n FROM type_count WHERE type = ?", type).one().n;
}

/** pendingTypes: the types that have at least one pending job here and are not paused. */
export function pendingTypes(sql: SqlStorage): string[] {
  return sql.exec<{ type: string }>(PENDING_TYPES).toArray().map((r) => r.type);
}

/** pendingTypesAll: the same, paused ones too (a paused type's pending work still holds its waitsFor waiters). */
export function pendingTypesAll(sql: SqlStorage): string[] {
  return sql.exec<{ type: string }>(PENDING_TYPES_ALL).toArray().map((r) => r.type);
}

/** allCounts: every (type, state, failure kind) with jobs here, and how many. */
export function allCounts(sql: SqlStorage): CountRow[] {
  const out: CountRow[] = [];
  for (const r of sql.exec<Record<string, string | number>>(ALL_COUNTS).toArray()) {
    for (const col of STATE_COLUMNS) {
      const n = r[col] as number;
      if (n === 0) continue;
      const failed = col.startsWith("failed_");
      out.push({ type: r.type as string, state: (failed ? "failed" : col) as JobState, failure_kind: (failed ? col.slice("failed_".length) : "") as FailureKind | "", n });
    }
  }
  return out;
}
