/**
 * Error groups in a scope object (docs/operating.md "Error groups"): each attempt that ended in an error is counted
 * in its type's group of that fingerprint (job/error-group.ts) — one row per group (`error_group`), written when
 * the errors capability writes its notes (errors.ts), one row for all of a group's attempts since the last. The row keeps five-minute counts over the last
 * day, the first and last job, and the newest jobs' ids; a group nothing has counted for a week goes when the type's
 * next new group is made.
 *
 * @module
 */
import { fingerprint, masked, type ErrorKind } from "../../job/error-group";
import type { ErrorGroup } from "../../job/schemas/errors";
import type { AttemptError } from "../jobs/home-store";
import type { ErrorNote } from "./error-notes";

/** Counts are kept per five minutes: "the last hour" is the last twelve of them. */
export const BUCKET_MS = 5 * 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** The newest jobs' ids a group keeps (a group's retry or rerun acts on them). */
export const RECENT_MAX = 20;
/** A group nothing counted for this long is deleted. */
export const GROUP_KEEP_MS = 7 * DAY_MS;

type GroupRow = {
  type: string;
  fingerprint: string;
  kind: ErrorKind;
  message: string;
  frame: string | null;
  sample: string;
  first_at: number;
  first_job: string;
  last_at: number;
  last_job: string;
  total: number;
  buckets: string;
  recent: string;
};

const GROUP_OF = "SELECT buckets, recent FROM error_group WHERE type = ? AND fingerprint = ?";
const GROUP_COUNTED = "UPDATE error_group SET last_at = ?3, last_job = ?4, total = total + ?7, buckets = ?5, recent = ?6 WHERE type = ?1 AND fingerprint = ?2";
const GROUP_MADE = `
INSERT INTO error_group (type, fingerprint, kind, message, frame, sample, first_at, first_job, last_at, last_job, total, buckets, recent)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?11, ?12, ?13, ?9, ?10)`;
const GROUPS_GONE = "DELETE FROM error_group WHERE type = ? AND last_at < ?";
const GROUPS_OF = "SELECT * FROM error_group WHERE ?1 IS NULL OR type = ?1";

/**
 * writeNotes: noted failures counted in their groups (inside the caller's transaction) — one row written per group,
 * however many attempts of it the notes hold.
 */
export function writeNotes(sql: SqlStorage, notes: readonly ErrorNote[]): void {
  const groups = new Map<string, ErrorNote[]>();
  for (const n of notes) {
    const key = `${n.job.type}\u0000${fingerprint(n.error.kind, n.error.message, n.error.frame)}`;
    const list = groups.get(key);
    if (list) list.push(n);
    else groups.set(key, [n]);
  }
  for (const [key, list] of groups) writeGroup(sql, key.slice(key.indexOf("\u0000") + 1), list);
}

/** noteError: one attempt's error counted in its group at once (writeNotes of one note). */
export function noteError(sql: SqlStorage, job: { id: string; type: string }, error: AttemptError, now: number): void {
  writeNotes(sql, [{ job, error, at: now }]);
}

function writeGroup(sql: SqlStorage, fp: string, notes: readonly ErrorNote[]): void {
  const first = notes[0]!;
  const last = notes[notes.length - 1]!;
  const type = first.job.type;
  const current = sql.exec<{ buckets: string; recent: string }>(GROUP_OF, type, fp).toArray()[0];
  const buckets: Record<string, number> = {};
  for (const [at, n] of Object.entries(current ? (JSON.parse(current.buckets) as Record<string, number>) : {})) if (Number(at) > last.at - DAY_MS) buckets[at] = n;
  let recent = current ? (JSON.parse(current.recent) as string[]) : [];
  for (const n of notes) {
    const bucket = n.at - (n.at % BUCKET_MS);
    buckets[bucket] = (buckets[bucket] ?? 0) + 1;
    recent = [...recent.filter((id) => id !== n.job.id), n.job.id];
  }
  recent = recent.slice(-RECENT_MAX);
  if (current) {
    sql.exec(GROUP_COUNTED, type, fp, last.at, last.job.id, JSON.stringify(buckets), JSON.stringify(recent), notes.length);
    return;
  }
  sql.exec(GROUPS_GONE, type, last.at - GROUP_KEEP_MS);
  const e = first.error;
  sql.exec(GROUP_MADE, type, fp, e.kind, masked(e.message), e.frame, e.message.slice(0, 500), first.at, first.job.id, JSON.stringify(buckets), JSON.stringify(recent), last.at, last.job.id, notes.length);
}

/** errorGroups: this object's groups (of `type`, or all), with their counts over the last hour and day at `now`. */
export function errorGroups(sql: SqlStorage, type: string | null, now: number): ErrorGroup[] {
  return sql
    .exec<GroupRow>(GROUPS_OF, type)
    .toArray()
    .map((r) => {
      const counts = Object.entries(JSON.parse(r.buckets) as Record<string, number>);
      const since = (ms: number) => counts.reduce((n, [at, c]) => (Number(at) + BUCKET_MS > now - ms ? n + c : n), 0);
      return {
        type: r.type,
        fingerprint: r.fingerprint,
        kind: r.kind,
        message: r.message,
        frame: r.frame,
        sample: r.sample,
        firstAt: r.first_at,
        firstJobId: r.first_job,
        lastAt: r.last_at,
        lastJobId: r.last_job,
        total: r.total,
        lastHour: since(HOUR_MS),
        lastDay: since(DAY_MS),
        recentJobIds: JSON.parse(r.recent) as string[],
      };
    });
}
