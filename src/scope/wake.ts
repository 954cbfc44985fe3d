/**
 * When a scope object must next wake (docs/design.md "Time and the alarm"):
 * the earliest of every capability's time (capability.ts `nextWake`). What of
 * it lives in SQLite is read by ONE statement, assembled from the
 * capabilities' columns (`wakeColumns`): it runs after every write, and as a
 * statement per part it was six calls into SQLite and the most frequent work
 * of a small call. A capability adds columns, never a statement.
 *
 * @module
 */
import type { Capability, WakeRow } from "./jobs/capability";
import { earliest } from "./jobs/capability";
import { CORE_WAKE_CTE } from "./jobs/core";
import { pendingTypes } from "./jobs/counts";
import type { HomeStore } from "./jobs/home-store";
import { LEVEL_JOB, levelsCte } from "./jobs/levels";

/** wakeStatement: the one wake-up statement over the capabilities' columns (a column name is given once). */
export function wakeStatement(capabilities: readonly Capability[]): string {
  const columns = new Map<string, string>();
  for (const c of capabilities) {
    for (const [name, sql] of Object.entries(c.wakeColumns ?? {})) {
      if (columns.has(name)) throw new Error(`wake-up column ${name} is given twice (capability ${c.name})`);
      columns.set(name, sql);
    }
  }
  return `${CORE_WAKE_CTE}\nSELECT ${[...columns].map(([name, sql]) => `${sql} AS ${name}`).join(",\n  ")}`;
}

/** nextWakeAt: the earliest time any capability gives, from the wake-up's row (kept by the memo while it stands). */
export function nextWakeAt(capabilities: readonly Capability[], row: WakeRow, now: number): number | null {
  return earliest(capabilities.map((c) => c.nextWake?.(row, now) ?? null));
}

/** jobCameDue: one seek per priority level of the type (levels.ts). */
const JOB_CAME_DUE = `
WITH RECURSIVE ${levelsCte("SELECT ?1 AS type")}
SELECT 1 AS due FROM lv, job AS j WHERE lv.p IS NOT NULL AND ${LEVEL_JOB} AND j.run_at > ?2 AND j.run_at <= ?3 LIMIT 1`;

/**
 * cameDueSince: the types with a pending job that became due in (since, now]
 * (without a `since`, any due one). Its row did not change, but the catalog's
 * split of pending into due and scheduled did, and parked pull claims may take it.
 */
export function cameDueSince(store: HomeStore, since: number | null, now: number): string[] {
  return pendingTypes(store.sql).filter((type) => store.sql.exec(JOB_CAME_DUE, type, since ?? -1, now).toArray().length > 0);
}
