/**
 * Jobs of an ordered type carry `ordered = 1` (set at enqueue from the
 * config), and only they have an entry in job_ordered_live_idx, which finds an
 * ordered type's head (claim.ts, orderedHead): the other jobs' inserts and
 * completions write no entry for it. A type made ordered by a deploy still has
 * live jobs enqueued before, without the mark: each instance marks them when
 * it starts, before it serves anything, so the head is never one of the newer
 * jobs while an older one waits.
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";

/**
 * jobMarkOrderedPending / Running: the claim index's type prefix; the running ones through the table (a pushed
 * lease has no job_lease_idx entry: pushed-leases.ts), so only when the type's count row says one runs. Held
 * retries were given back to the index just before (held-retries.ts; a type made ordered holds none after).
 */
const MARK_PENDING = "UPDATE job SET ordered = 1 WHERE state = 'pending' AND held = 0 AND type = ? AND ordered = 0";
const MARK_RUNNING = "UPDATE job SET ordered = 1 WHERE state IN ('running', 'waiting') AND type = ? AND ordered = 0";
const TYPE_RUNNING = "SELECT running + waiting AS running FROM type_count WHERE type = ?";

export function markOrderedJobs(sql: SqlStorage, config: QueueConfig): void {
  for (const type of Object.keys(config.types)) {
    if (!config.typeSettings(type).ordered) continue;
    sql.exec(MARK_PENDING, type);
    if ((sql.exec<{ running: number }>(TYPE_RUNNING, type).toArray()[0]?.running ?? 0) > 0) sql.exec(MARK_RUNNING, type);
  }
}
