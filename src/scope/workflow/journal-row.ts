/**
 * A job's journal kept in its own row: the job table's `journal` column (docs/design.md "Durable steps").
 *
 * A durable step that lands as a `job_step` row costs two rows written over its life — its insert, and its delete
 * with the job — and the job's start record two more. Appended to the job's row instead, a step is one row written
 * (an update of a row whose columns no index holds) and goes with the job's delete for nothing. What goes here is
 * what never changes once written: a finished `ctx.step` and a `ctx.sleep`, at a position nothing holds yet. What
 * changes after it is written — a wait, an invoke, a token, an atMostOnce step's start — stays in `job_step`, as
 * does whatever would take the row's share past ROW_JOURNAL_MAX (every `SELECT *` of the job carries it). Readers
 * (steps.ts, waits.ts; ENTRIES_AT below) read both and see one journal, ordered by position.
 *
 * The start record (from which ctx.now() and ctx.uuid() derive) is the column's own `at` and `seed`, written with
 * the job's first journal write of any kind. A job journaled before this column (its start as `job_step` position
 * -1) reads as before; its first write here copies that start, not the one the write carries.
 *
 * @module
 */
import type { Journal, JournalEntry, JournalKind, JournalStart } from "../../job/handler-contract";
import type { HomeStore } from "../jobs/home-store";
import { oneJobRow, rowJournalText, type JobRow } from "../jobs/job-row";

/** The row's share of the journal, in characters of its JSON; entries past it go to job_step. */
export const ROW_JOURNAL_MAX = 16_384;

/** An entry as the row keeps it: [seq, name, kind, result (JSON text), startedAt, finishedAt, attempt, wakeAt, bytes]. */
type RowEntry = [number, string, JournalKind, string | null, number, number | null, number, number | null, number];
type RowJournal = { at: number; seed: string; bytes: number; e: RowEntry[] };

/**
 * The column as a job's first journal write leaves it: the start the write carries, or — a job journaled before the
 * column — the one at job_step position -1, which stands whatever a later write sends (as its INSERT OR IGNORE did).
 */
const START_AT = "FROM job_step WHERE job_seq = ?1 AND seq = -1";
const FRESH = `json_object('at', coalesce((SELECT started_at ${START_AT}), ?2), 'seed', coalesce((SELECT result ${START_AT}), ?3), 'bytes', 0, 'e', json('[]'))`;
/** The start record alone (a first write that goes to job_step): one row, this update. */
const START_SET = `UPDATE job SET journal = ${FRESH} WHERE seq = ?1 AND journal IS NULL`;
/** An entry appended, with the start record on a first write, when the row's share has room (RETURNING: it did). */
const ENTRY_APPEND = `
UPDATE job SET journal = json_set(json_insert(coalesce(journal, ${FRESH}), '$.e[#]', json(?4)), '$.bytes', coalesce(journal ->> 'bytes', 0) + ?5)
 WHERE seq = ?1 AND coalesce(length(journal), 0) + length(?4) <= ?6
RETURNING seq`;
/** The row's share of several jobs' journals (their primary keys), for the ones that have one. */
const ROW_JOURNALS_OF = "SELECT seq, journal FROM job WHERE seq IN (SELECT value FROM json_each(?1)) AND journal IS NOT NULL";

/**
 * ENTRIES_AT: the journal's entries at some positions, in both parts — job_step's key, and the job's row — in one
 * read, with the columns the journal's checks read (?1 the job's seq, ?2 a JSON array of positions). Each part names
 * its columns in the same order: UNION ALL pairs them by place, not by name.
 */
export const ENTRIES_AT = `
SELECT seq, name, kind, finished_at, wake_at, ref, bytes FROM job_step WHERE job_seq = ?1 AND seq IN (SELECT value FROM json_each(?2))
UNION ALL
SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 5, j.value ->> 7, NULL, j.value ->> 8
  FROM job, json_each(job.journal, '$.e') AS j
 WHERE job.seq = ?1 AND job.journal IS NOT NULL AND (j.value ->> 0) IN (SELECT p.value FROM json_each(?2) AS p)`;
/** The row's share of the journal's bytes (?1 the job's seq): 0 without one. */
export const ROW_BYTES = "coalesce((SELECT journal ->> 'bytes' FROM job WHERE seq = ?1), 0)";

/** rowKeeps: whether an entry belongs in the row — written finished, never changed after, nothing at its position. */
export function rowKeeps(e: { kind: string; finishedAt: number | null; ref?: string | null }, held: boolean): boolean {
  return !held && e.finishedAt !== null && (e.kind === "step" || e.kind === "sleep" || e.kind === "patch") && (e.ref ?? null) === null;
}

/** appendRowEntry: the entry appended to the job's row (inside the caller's transaction); false when the row's share is full. */
export function appendRowEntry(store: Pick<HomeStore, "sql">, jobSeq: number, start: JournalStart, e: JournalEntry, bytes: number): boolean {
  const entry: RowEntry = [e.seq, e.name, e.kind, e.result, e.startedAt, e.finishedAt, e.attempt, e.wakeAt, bytes];
  return store.sql.exec(ENTRY_APPEND, jobSeq, start.at, start.seed, JSON.stringify(entry), bytes, ROW_JOURNAL_MAX).toArray().length > 0;
}

/** writeRowStart: the start record, if the job has none in its row yet (inside the caller's transaction). */
export function writeRowStart(store: Pick<HomeStore, "sql">, jobSeq: number, start: JournalStart): void {
  store.sql.exec(START_SET, jobSeq, start.at, start.seed);
}

/**
 * rowJournals: the row's share of these jobs' journals (by seq), for the ones that have one — from the column as
 * the rows' statement read it (job-row.ts rowJournalText), else read here.
 */
export function rowJournals(store: Pick<HomeStore, "sql">, rows: readonly JobRow[]): Map<number, Journal> {
  const out = new Map<number, Journal>();
  const unread: number[] = [];
  for (const row of rows) {
    const text = rowJournalText(row);
    if (text === undefined) unread.push(row.seq);
    else if (text !== null) out.set(row.seq, parse(text));
  }
  if (unread.length === 0) return out;
  for (const r of store.sql.exec<{ seq: number; journal: string }>(ROW_JOURNALS_OF, JSON.stringify(unread)).toArray()) out.set(r.seq, parse(r.journal));
  return out;
}

function parse(text: string): Journal {
  const j = JSON.parse(text) as RowJournal;
  // Parallel steps finish, and so are appended, out of their positions' order.
  return { start: { at: j.at, seed: j.seed }, entries: j.e.map(toEntry).sort((a, b) => a.seq - b.seq) };
}

function toEntry(r: RowEntry): JournalEntry {
  return { seq: r[0], name: r[1], kind: r[2], result: r[3], startedAt: r[4], finishedAt: r[5], attempt: r[6], wakeAt: r[7] };
}

const ROW_JOURNAL_OF = "SELECT journal FROM job WHERE seq = ?";
const JOURNAL_AND_LINK_SET = "UPDATE job SET journal = ?2, rerun_of = ?3 WHERE seq = ?1 RETURNING *";
const STEPS_BEFORE_COPY = `
INSERT INTO job_step (job_seq, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes, ref)
SELECT ?1, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes, ref FROM job_step WHERE job_seq = ?2 AND seq >= 0 AND seq < ?3`;

/**
 * copyJournalBefore: the entries of job `from`'s journal before position `cut` (both parts), with its start record,
 * made job `to`'s journal, and `to` linked to the job it reruns (scope/workflow/rerun.ts; inside the caller's
 * transaction). The start record is kept, so a replay's ctx.now() and ctx.uuid() answer as they did. Answers `to`'s row.
 */
export function copyJournalBefore(store: Pick<HomeStore, "sql">, from: number, to: number, cut: number, rerunOf: string): JobRow {
  const text = store.sql.exec<{ journal: string | null }>(ROW_JOURNAL_OF, from).one().journal;
  let kept: RowJournal;
  if (text !== null) {
    const j = JSON.parse(text) as RowJournal;
    const e = j.e.filter((r) => r[0] < cut);
    kept = { at: j.at, seed: j.seed, bytes: e.reduce((n, r) => n + r[8], 0), e };
  } else {
    // A job journaled before the row kept its start: position -1 of job_step.
    const start = store.sql.exec<{ at: number; seed: string }>(`SELECT started_at AS at, result AS seed ${START_AT}`, from).toArray()[0];
    kept = { at: start?.at ?? 0, seed: start?.seed ?? "", bytes: 0, e: [] };
  }
  store.sql.exec(STEPS_BEFORE_COPY, to, from, cut);
  return oneJobRow(store.sql.exec(JOURNAL_AND_LINK_SET, to, JSON.stringify(kept), rerunOf));
}
