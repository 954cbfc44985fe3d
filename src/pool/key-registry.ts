/**
 * The key values of a keyed limit that hold anything (docs/guards.md "Keyed limits"). Each value has a pool object
 * of its own (`<name>#<key>`, pool-name.ts), which nobody can enumerate; so each tells the object of the limit's own
 * name what it holds — live permits' cost and waiters — when that changes, at most once a second (`KeyReporter`;
 * a change held back is sent by the alarm). That object keeps a row per busy value (`pool_key`), which `GET
 * /v1/pools` lists busiest first; a value reported idle has its row deleted, and its object deletes its storage
 * once it has stayed idle a while (pool-do.ts).
 *
 * @module
 */

/** A key value's object idle this long deletes its storage (and its row in the registry goes). */
export const KEY_IDLE_KEEP_MS = 60_000;

/** A key value reports at most this often: a tenant's object that turns busy and idle between jobs is not a report per job. */
export const KEY_REPORT_EVERY_MS = 1_000;

export interface KeyFigures {
  active: number;
  waiting: number;
}

export type KeyRow = {
  key: string;
  active: number;
  waiting: number;
  at: number;
};

const KEY_UPSERT = "INSERT INTO pool_key (key, active, waiting, at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key) DO UPDATE SET active = ?2, waiting = ?3, at = ?4";
const KEY_DELETE = "DELETE FROM pool_key WHERE key = ?";
/** pool_key_busy_idx, after the cursor (active DESC, key). */
const KEYS_BUSIEST = "SELECT key, active, waiting, at FROM pool_key WHERE ?1 IS NULL OR active < ?1 OR (active = ?1 AND key > ?2) ORDER BY active DESC, key LIMIT ?3";
const KEYS_TOTAL = "SELECT count(*) AS keys, coalesce(sum(active), 0) AS active FROM pool_key";

/** noteKey: what a key value's object reported (in the registry object). */
export function noteKey(sql: SqlStorage, key: string, f: KeyFigures, now: number): void {
  if (f.active === 0 && f.waiting === 0) sql.exec(KEY_DELETE, key);
  else sql.exec(KEY_UPSERT, key, f.active, f.waiting, now);
}

/** keyCursor: a cursor `busiestKeys` gave, read back; null when the text is none of its. */
export function keyCursor(cursor: string): [number, string] | null {
  try {
    const v = JSON.parse(cursor) as unknown;
    return Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) && typeof v[1] === "string" ? [v[0] as number, v[1]] : null;
  } catch {
    return null;
  }
}

/** busiestKeys: a page of busy key values, busiest first; `next` is the cursor of the page after, or null. */
export function busiestKeys(sql: SqlStorage, cursor: string | null, limit: number): { keys: KeyRow[]; next: string | null } {
  const after = cursor === null ? null : keyCursor(cursor);
  const rows = sql.exec<KeyRow>(KEYS_BUSIEST, after?.[0] ?? null, after?.[1] ?? null, limit + 1).toArray();
  const keys = rows.slice(0, limit);
  const last = keys.at(-1);
  return { keys, next: rows.length > limit && last ? JSON.stringify([last.active, last.key]) : null };
}

/** keyTotals: how many key values are busy, and their summed active cost. */
export function keyTotals(sql: SqlStorage): { keys: number; active: number } {
  return sql.exec<{ keys: number; active: number }>(KEYS_TOTAL).one();
}

/**
 * KeyReporter: in a key value's object, whether what it holds must be told now, later (the alarm, at `dueAt`), or
 * not at all (unchanged since the last report). In memory: a new instance reports its first figures.
 */
export class KeyReporter {
  private sent: KeyFigures | null = null;
  private sentAt = -Infinity;

  /** take: the figures to send now, or null (unchanged, or held back until `dueAt`: at most one report a second); `force`: now. */
  take(f: KeyFigures, now: number, force = false): KeyFigures | null {
    const last = this.sent;
    if (last && last.active === f.active && last.waiting === f.waiting) return null;
    // No `last`: this instance has sent nothing (it is new, or its last report failed) — the registry may still
    // hold a row from before, so even zeros go once.
    if (!force && now < this.sentAt + KEY_REPORT_EVERY_MS) return null;
    this.sent = f;
    this.sentAt = now;
    return f;
  }

  /** dueAt: when a held-back change must be sent, or null (none held back). */
  dueAt(f: KeyFigures): number | null {
    const last = this.sent;
    return last && (last.active !== f.active || last.waiting !== f.waiting) ? this.sentAt + KEY_REPORT_EVERY_MS : null;
  }

  /** failed: the report did not land: the next change (or the alarm) sends the figures again. */
  failed(): void {
    this.sent = null;
  }
}
