/**
 * Permits of one pool: grant up to a limit, renew, release, expire — and the
 * waiting line of holders that asked while the pool was full. Plain functions
 * over SqlStorage, all synchronous, so each call is one transaction.
 *
 * @module
 */

/** permitDeleteExpired: permit_expires_idx. */
const PERMIT_DELETE_EXPIRED = "DELETE FROM permit WHERE expires_at <= ? RETURNING id";
const PERMIT_COUNT = "SELECT count(*) AS n FROM permit";
const PERMIT_INSERT = "INSERT INTO permit (id, holder, expires_at) VALUES (?, ?, ?)";
const PERMIT_RENEW = "UPDATE permit SET expires_at = ? WHERE id IN (SELECT value FROM json_each(?)) RETURNING id";
const PERMIT_RELEASE = "DELETE FROM permit WHERE id IN (SELECT value FROM json_each(?)) RETURNING id";
const PERMIT_NEXT_EXPIRY = "SELECT min(expires_at) AS t FROM permit";
const WAITER_UPSERT = "INSERT INTO waiter (holder, since) VALUES (?, ?) ON CONFLICT (holder) DO NOTHING";
const WAITER_DELETE = "DELETE FROM waiter WHERE holder = ?";
/** waiterTakeOldest: waiter_since_idx — the holders that have waited longest are told first. */
const WAITER_TAKE_OLDEST = "DELETE FROM waiter WHERE holder IN (SELECT holder FROM waiter ORDER BY since, holder LIMIT ?) RETURNING holder";

export interface Grant {
  permits: string[];
  /** When the caller got fewer than it asked for: try again no later than this (a wake-up also comes when a slot frees). */
  retryAfterMs: number;
  /** Holders to wake because expired permits freed slots. */
  wake: string[];
}

/** Bounds on the retry hint: a freed slot also wakes the holder, so this is only the fallback. */
export const RETRY_MIN_MS = 50;
export const RETRY_MAX_MS = 5_000;

/** acquire grants up to `want` permits while fewer than `limit` are live. */
export function acquire(sql: SqlStorage, holder: string, want: number, limit: number, ttlMs: number, now: number): Grant {
  const wake = expire(sql, now);
  const active = sql.exec<{ n: number }>(PERMIT_COUNT).one().n;
  const grant = Math.max(0, Math.min(want, limit - active));
  const permits: string[] = [];
  for (let i = 0; i < grant; i++) {
    const id = crypto.randomUUID();
    sql.exec(PERMIT_INSERT, id, holder, now + ttlMs);
    permits.push(id);
  }
  let retryAfterMs = 0;
  if (grant < want) {
    sql.exec(WAITER_UPSERT, holder, now);
    const next = nextExpiry(sql);
    retryAfterMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, next === null ? RETRY_MIN_MS : next - now));
  } else {
    sql.exec(WAITER_DELETE, holder);
  }
  return { permits, retryAfterMs, wake: wake.filter((h) => h !== holder) };
}

/** renew extends the permits still held; returns the ids that were not (they expired and were reclaimed). */
export function renew(sql: SqlStorage, ids: readonly string[], ttlMs: number, now: number): string[] {
  const kept = new Set(sql.exec<{ id: string }>(PERMIT_RENEW, now + ttlMs, JSON.stringify(ids)).toArray().map((r) => r.id));
  return ids.filter((id) => !kept.has(id));
}

/** release frees permits and returns the holders to wake, one per freed slot, longest waiting first. */
export function release(sql: SqlStorage, ids: readonly string[], now: number): string[] {
  const freed = sql.exec(PERMIT_RELEASE, JSON.stringify(ids)).toArray().length;
  return [...expire(sql, now, freed)];
}

/** expire drops lapsed permits (their holder died or stopped renewing) and returns the holders to wake for every freed slot. */
export function expire(sql: SqlStorage, now: number, alsoFreed = 0): string[] {
  const freed = sql.exec(PERMIT_DELETE_EXPIRED, now).toArray().length + alsoFreed;
  if (freed === 0) return [];
  return sql.exec<{ holder: string }>(WAITER_TAKE_OLDEST, freed).toArray().map((r) => r.holder);
}

export function nextExpiry(sql: SqlStorage): number | null {
  return sql.exec<{ t: number | null }>(PERMIT_NEXT_EXPIRY).one().t;
}

export function activeCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>(PERMIT_COUNT).one().n;
}
