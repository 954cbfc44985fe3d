/**
 * A job's `ctx.log` lines, stored with it (docs/handlers.md "Logs kept with the job";
 * job/log-lines.ts has the line's shape and limits): the completing attempt's in
 * the job's own row, written by the completion's update (`ROW_LOGS_SET`), any
 * other attempt's (and a completion's too long for the row) in job_log. A pushed handler's lines
 * ride with its outcome (kept only if it lands under the lease), so keeping them costs no call of their own; a pull
 * worker sends them with its completion, or before any other settle (POST /v1/jobs/{id}/logs). An attempt
 * that dies without an outcome takes its lines with it.
 *
 * @module
 */
import { LOG_LINES_PER_JOB, readLogLines, type JobLogLine } from "../../job/log-lines";
import { leased, leaseRefusal } from "./lease";
import { byId, idSeq } from "./read";
import type { Refusal } from "./outcome";
import type { HomeStore } from "./home-store";
import { REDACTED, type Lens } from "../../sealing/lens";

const JOB_SEQ = `SELECT seq, type FROM job WHERE ${byId("?1", "?2")}`;
/**
 * A line's place is the job's last + 1 (job_log is keyed by (job, place) alone, WITHOUT ROWID: one row written a
 * line). The last place is read once, before the rows go in (SQLite runs an INSERT's SELECT of its own table first).
 */
const LOG_INSERT = `
INSERT INTO job_log (id, job_seq, at, attempt, message, fields)
SELECT (SELECT coalesce(max(id), 0) FROM job_log WHERE job_seq = ?1) + key + 1, ?1, value ->> 'at', value ->> 'attempt', value ->> 'message',
       CASE WHEN value ->> 'fields' IS NULL THEN NULL ELSE value -> 'fields' END FROM json_each(?2)`;
/** Keep the newest LOG_LINES_PER_JOB: job_log's key (job_seq, id). */
const LOG_TRIM = `
DELETE FROM job_log WHERE job_seq = ?1 AND id <= (
  SELECT id FROM job_log WHERE job_seq = ?1 ORDER BY id DESC LIMIT 1 OFFSET ${LOG_LINES_PER_JOB})`;
const LOG_LIST = "SELECT at, attempt, message, fields FROM job_log WHERE job_seq = ? ORDER BY id";
const JOB_SEQ_LOGS = `SELECT seq, type, logs FROM job WHERE ${byId("?1", "?2")}`;

/**
 * The completing attempt's lines ride in the completion's own update, in the job's `logs` column (docs/design.md
 * "Logs in the row"), when their JSON is at most this long; longer, they go to job_log as any other attempt's.
 */
export const ROW_LOGS_MAX = 8 * 1024;

/**
 * rowLogs: lines as the completion's update takes them (`[[at, attempt, message, fields], …]`; attempt 0: the
 * lease's, which the update fills in), or null when they are too long for the row.
 */
export function rowLogs(items: readonly WorkerLogItem[], lens: Lens): { values: unknown[][]; size: number; lines: JobLogLine[] } | null {
  const lines = workerLogLines(items, 0);
  if (lines.length === 0) return null;
  const values = lines.map((l) => sealLine(lens, l)).map((l) => [l.at, l.attempt, l.message, l.fields]);
  const size = JSON.stringify(values).length;
  return size <= ROW_LOGS_MAX ? { values, size, lines } : null;
}

/**
 * ROW_LOGS_SET: the completion's SET term — the lines at `v.value -> 4` after what the row holds, the lease's attempt
 * for those without one. Nothing there, nothing changes.
 */
export const ROW_LOGS_SET = `logs = CASE WHEN v.value ->> 4 IS NULL THEN job.logs ELSE (
  SELECT json_group_array(json(e)) FROM (
    SELECT value AS e FROM json_each(coalesce(job.logs, '[]'))
    UNION ALL
    SELECT json_array(l.value ->> 0, CASE WHEN l.value ->> 1 = 0 THEN job.attempts ELSE l.value ->> 1 END, l.value ->> 2, json(l.value -> 3))
      FROM json_each(v.value -> 4) AS l)) END`;

/** sealLine: a line as stored — its message and fields sealed (sealing/vault.ts; unchanged without keys). */
function sealLine(lens: Lens, l: JobLogLine): JobLogLine {
  if (!lens.vault.on) return l;
  const fields = l.fields === null || l.fields === undefined ? l.fields : (JSON.parse(lens.seal(JSON.stringify(l.fields))) as JobLogLine["fields"]);
  return { ...l, message: lens.vault.sealString(l.message), fields };
}

/** shownLine: a stored line as a reader's view holds it (sealing/lens.ts): a sensitive type's redacted; sealed parts stay sealed. */
function shownLine(lens: Lens, type: string, l: JobLogLine): JobLogLine {
  if (!lens.sensitive(type)) return l;
  return { ...l, message: REDACTED, fields: l.fields === null || l.fields === undefined ? l.fields : (REDACTED as unknown as JobLogLine["fields"]) };
}

/** rowLogLines: the lines a row keeps (`logs`), oldest first. */
function rowLogLines(text: string | null): JobLogLine[] {
  if (text === null) return [];
  return (JSON.parse(text) as [number, number, string, JobLogLine["fields"]][]).map(([at, attempt, message, fields]) => ({ at, attempt, message, fields }));
}

/** appendLogs: inside the caller's transaction; lines of a job that is gone are dropped. Its watchers hear of them (feed.ts). */
export function appendLogs(store: Pick<HomeStore, "sql" | "feed" | "lens">, id: string, lines: readonly JobLogLine[]): void {
  if (lines.length === 0) return;
  const { sql } = store;
  const row = sql.exec<{ seq: number; type: string }>(JOB_SEQ, id, idSeq(id)).toArray()[0];
  if (!row) return;
  const kept = lines.slice(-LOG_LINES_PER_JOB).map((l) => ({ ...l, fields: l.fields ?? null }));
  sql.exec(LOG_INSERT, row.seq, JSON.stringify(kept.map((l) => sealLine(store.lens, l))));
  sql.exec(LOG_TRIM, row.seq);
  store.feed.log(id, shownLines(store.lens, row.type, kept));
}

/** shownLines: lines as a job's watchers are told of them (feed.ts): a sensitive type's redacted (sealing/lens.ts). */
export function shownLines(lens: Lens, type: string, lines: readonly JobLogLine[]): JobLogLine[] {
  return lines.map((l) => shownLine(lens, type, l));
}

/** keepLogs: appendLogs for an outcome that landed; a failure to keep its lines never costs the job its outcome (job/log-lines.ts). */
export function keepLogs(store: Pick<HomeStore, "sql" | "feed" | "lens">, id: string, lines: readonly JobLogLine[]): void {
  try {
    appendLogs(store, id, lines);
  } catch (e) {
    console.error(JSON.stringify({ event: "job:logs_not_kept", id, error: String(e) }));
  }
}

const JOB_LEASED_ATTEMPT = `SELECT attempts FROM job WHERE ${leased("?4")}`;

/** A line as a pull worker sends it: without an attempt, it is the lease's. */
export type WorkerLogItem = { at: number; attempt?: number; message: string; fields?: unknown };

/** workerLogLines: a pull worker's lines, clipped as a pushed handler's are, the attempt filled in. */
export function workerLogLines(items: readonly WorkerLogItem[], attempt: number): JobLogLine[] {
  return readLogLines(items.map((i) => ({ ...i, attempt: i.attempt ?? attempt })));
}

/** appendLeasedLogs: a pull worker's lines, fenced by its lease; an item without an attempt is the lease's. */
export function appendLeasedLogs(store: HomeStore, id: string, token: string, items: readonly WorkerLogItem[], now: number): { ok: true; stored: number } | Refusal {
  return store.atomic(() => {
    const row = store.sql.exec<{ attempts: number }>(JOB_LEASED_ATTEMPT, now, id, token, idSeq(id)).toArray()[0];
    if (!row) return leaseRefusal(store, id, token, now);
    const lines = workerLogLines(items, row.attempts);
    appendLogs(store, id, lines);
    return { ok: true as const, stored: lines.length };
  });
}

/**
 * jobLogs: oldest first, the newest LOG_LINES_PER_JOB; null when there is no such job. The row's lines are its
 * completing attempt's, the last it ran: they follow job_log's.
 */
export function jobLogs(store: Pick<HomeStore, "sql" | "lens">, id: string): JobLogLine[] | null {
  const { sql, lens } = store;
  const row = sql.exec<{ seq: number; type: string; logs: string | null }>(JOB_SEQ_LOGS, id, idSeq(id)).toArray()[0];
  if (!row) return null;
  const table = sql
    .exec<{ at: number; attempt: number; message: string; fields: string | null }>(LOG_LIST, row.seq)
    .toArray()
    .map((r) => ({ at: r.at, attempt: r.attempt, message: r.message, fields: r.fields === null ? null : (JSON.parse(r.fields) as JobLogLine["fields"]) }));
  return [...table, ...rowLogLines(row.logs)].slice(-LOG_LINES_PER_JOB).map((l) => shownLine(lens, row.type, l));
}
