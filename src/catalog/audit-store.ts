/**
 * The audit list's rows (tables/catalog.ts `audit_entry`; docs/operating.md "Tokens and roles"): one row per
 * operator action, written by the call that made it, and those older than the retention dropped by the same call
 * (an indexed range: nothing read when there is nothing to drop).
 *
 * @module
 */
import type { AuditEntry, AuditQuery } from "../job/schemas/audit";

/** What a call records. */
export interface AuditRecord {
  token: string;
  role: string;
  action: string;
  /** JSON object text. */
  detail: string;
}

const INSERT = "INSERT INTO audit_entry (at, token, role, action, detail) VALUES (?, ?, ?, ?, ?)";
const DROP_OLD = "DELETE FROM audit_entry WHERE at < ?";
/** Newest first, from `before`: the primary key backwards, filtered. */
const PAGE = `
SELECT id, at, token, role, action, detail FROM audit_entry
 WHERE id < ?1 AND (?2 IS NULL OR token = ?2) AND (?3 IS NULL OR action = ?3)
 ORDER BY id DESC LIMIT ?4`;

/** record: the entry at `now`, and what is past `keepMs` dropped. */
export function record(sql: SqlStorage, r: AuditRecord, now: number, keepMs: number): void {
  sql.exec(INSERT, now, r.token, r.role, r.action, r.detail);
  sql.exec(DROP_OLD, now - keepMs);
}

/** page: a page of the list, newest first, and the cursor for the next. */
export function page(sql: SqlStorage, q: AuditQuery): { items: AuditEntry[]; next: number | null } {
  const rows = sql
    .exec<{ id: number; at: number; token: string; role: string; action: string; detail: string }>(PAGE, q.before ?? Number.MAX_SAFE_INTEGER, q.token ?? null, q.action ?? null, q.limit + 1)
    .toArray();
  const more = rows.length > q.limit;
  const items = rows.slice(0, q.limit).map((r) => ({ ...r, role: r.role as AuditEntry["role"], detail: JSON.parse(r.detail) as Record<string, unknown> }));
  return { items, next: more ? items[items.length - 1]!.id : null };
}
