/**
 * The dispatcher's side of held retries (jobs/held-retries.ts): which types
 * have one due, and their restart straight to a handler inside the claim's
 * transaction. A held retry restarts ahead of the claim index only while no
 * job of its type there is due: otherwise it goes back to the index (its
 * entry written, as any retry's was) and the claim orders it by priority,
 * runAt and age with the others.
 *
 * @module
 */
import { countDue } from "../jobs/claim";
import { newLeaseToken } from "../jobs/home-store";
import type { HomeStore } from "../jobs/home-store";
import type { JobRow } from "../jobs/job-row";
import { releaseOne, restartHeld } from "../jobs/held-retries";
import { isPaused } from "../jobs/pause-gate";
import { PUSH_WORKER } from "../jobs/pushed-leases";
import { payCounts } from "../jobs/tallies";

/** heldDueTypes: the types of the retries held here that are due at `now`, paused ones left out (their resume fills). */
export function heldDueTypes(store: HomeStore, now: number): string[] {
  const due = store.pushed.held.due(now);
  if (due.length === 0) return [];
  return [...new Set(due.map((h) => h.type))].filter((t) => !isPaused(store.sql, t));
}

/**
 * restartDue: in the claim's transaction, up to `limit` held due retries of `type` restarted (their rows, running),
 * or given back to the index when jobs of the type there are due. `left`: the ids that are no longer held, to forget
 * once the transaction commits (a rolled-back one leaves memory as it was: the rows are still held).
 */
export function restartDue(store: HomeStore, type: string, limit: number, leaseMs: number, now: number, left: string[]): JobRow[] {
  const due = store.pushed.held.due(now, type);
  if (due.length === 0 || limit <= 0) return [];
  const behind = countDue(store.sql, type, now, 1) > 0;
  // Back in the index, a held row is counted as pending there: what its hold owes is written first (count-debt.ts).
  if (behind) payCounts(store);
  const out: JobRow[] = [];
  for (const h of due) {
    if (behind) {
      releaseOne(store.sql, h.seq);
      left.push(h.id);
      continue;
    }
    if (out.length >= limit) break;
    const rows = restartHeld(store, h.seq, now, leaseMs, newLeaseToken(), PUSH_WORKER);
    // None: the row left the hold by another path (a cancel) whose note memory has not had yet.
    if (rows.length === 0) left.push(h.id);
    out.push(...rows);
  }
  if (out.length > 0 || behind) store.touched(now);
  return out;
}
