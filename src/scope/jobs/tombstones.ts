/**
 * Tombstones: a deleted job's id — one a caller gave (an id the queue made up cannot come back) — kept `retention.idempotencyMs` (7 days by
 * default) after retention or prune deletes the job, so an id still means
 * "already done" — an enqueue with it answers `{created: false, job: null}`
 * and creates nothing, as BullMQ's job ids and Cloudflare's idempotency keys
 * lead callers to expect. Swept by the same alarm as the jobs.
 *
 * @module
 */
import type { HomeStore } from "./home-store";

const TOMBSTONE_PUT = "INSERT OR REPLACE INTO job_tombstone (id, expires_at) SELECT value, ? FROM json_each(?)";
/** tombstonesHeld: which of these ids (json array) are tombstones still in force. */
const TOMBSTONES_HELD = "SELECT id FROM job_tombstone WHERE id IN (SELECT value FROM json_each(?)) AND expires_at > ?";
/** tombstonesExpired: job_tombstone_expires_idx. */
const TOMBSTONES_EXPIRED = "DELETE FROM job_tombstone WHERE id IN (SELECT id FROM job_tombstone WHERE expires_at <= ? ORDER BY expires_at LIMIT ?) RETURNING id";

/** bury: the jobs of these ids were deleted; keep their ids for the configured window. */
export function bury(store: HomeStore, ids: readonly string[], now: number): void {
  const keep = store.config.retention.idempotencyMs;
  if (keep > 0 && ids.length > 0) store.sql.exec(TOMBSTONE_PUT, now + keep, JSON.stringify(ids));
}

/** buried: the ids among these that only a tombstone remembers. */
export function buried(store: HomeStore, ids: readonly string[], now: number): Set<string> {
  if (ids.length === 0) return new Set();
  return new Set(store.sql.exec<{ id: string }>(TOMBSTONES_HELD, JSON.stringify(ids), now).toArray().map((r) => r.id));
}

/** sweepTombstones: delete up to `limit` expired tombstones; returns how many. */
export function sweepTombstones(store: HomeStore, now: number, limit: number): number {
  return store.sql.exec(TOMBSTONES_EXPIRED, now, limit).toArray().length;
}
