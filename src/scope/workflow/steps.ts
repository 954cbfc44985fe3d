/**
 * Durable steps: a job's journal in its own object's SQLite (README "Durable
 * steps"; the `job_step` table).
 *
 * Every write is fenced by the attempt's lease, in one transaction with the
 * check, as settles are: a deposed attempt (its lease expired, cancelled,
 * timed out, or claimed again) cannot append. A step's row is written when it
 * finishes, or — `atMostOnce` — when it starts, so a later attempt can tell
 * "started and never finished" and refuse to run it twice. A write at a
 * position the journal already holds under another name is nondeterminism:
 * the code changed under the job. The first write of a job also persists its
 * start record, from which `ctx.now()` and `ctx.uuid()` derive. A finished step
 * or a sleep is kept in the job's own row, one row written (journal-row.ts);
 * the rest in job_step; every reader here reads both.
 *
 * @module
 */
import { markSensitive } from "../../sealing/lens";
import { plainBytes } from "../../sealing/vault";
import type { Journal, JournalEntry, JournalKind, JournalStart, JournalWrite } from "../../job/handler-contract";
import { utf8Length } from "../../job/json-size";
import type { StepView } from "../../job/schemas";
import { jobRows, type JobRow } from "../jobs/job-row";
import type { Outcome, Refusal } from "../jobs/outcome";
import { getJob } from "../jobs/read";
import { JOB_FIND_LEASED, leaseRefusal } from "../jobs/lease";
import { idSeq } from "../jobs/read";
import type { HomeStore } from "../jobs/home-store";
import type { WorkflowStore } from "./workflow-store";
import { appendRowEntry, ENTRIES_AT, rowJournals, rowKeeps, ROW_BYTES, writeRowStart } from "./journal-row";
import { makeToken } from "../../job/wait-token";

/** The journal's size so far, both parts (its cap: limits.journalMaxBytes). */
export const JOURNAL_BYTES = `SELECT coalesce((SELECT sum(bytes) FROM job_step WHERE job_seq = ?1), 0) + ${ROW_BYTES} AS n`;
const STEP_UPSERT = `
INSERT INTO job_step (job_seq, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes, ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT (job_seq, seq) DO UPDATE SET result = excluded.result, finished_at = excluded.finished_at, attempt = excluded.attempt, bytes = excluded.bytes`;
/** Journals of several jobs at once (primary key range per job), for a dispatched batch: job_step's part. */
const JOURNALS_OF = "SELECT * FROM job_step WHERE job_seq IN (SELECT value FROM json_each(?)) ORDER BY job_seq, seq";
/** Unfinished steps (atMostOnce, started in an attempt that died): a manual retry runs them again. */
const UNFINISHED_DELETE = "DELETE FROM job_step WHERE job_seq = ? AND kind = 'step' AND finished_at IS NULL";
const UNFINISHED_BY_NAME = "SELECT seq FROM job_step WHERE job_seq = ? AND name = ? AND kind = 'step' AND finished_at IS NULL ORDER BY seq LIMIT 1";
type StepRow = {
  job_seq: number;
  seq: number;
  name: string;
  kind: "start" | JournalKind;
  result: string | null;
  started_at: number;
  finished_at: number | null;
  attempt: number;
  wake_at: number | null;
  bytes: number;
};

/** A journal write refused: the job cannot take it. */
type StepRefusal = Extract<Refusal, { code: "payload_too_large" | "journal_too_large" | "nondeterminism" }>;

/** journalsOf: the journals of these jobs (by seq), for the ones that have one. */
export function journalsOf(store: Pick<HomeStore, "sql">, rows: readonly JobRow[]): Map<number, Journal> {
  if (rows.length === 0) return new Map();
  // The row's part, as the rows were read (journal-row.ts); then job_step's, one index seek per job. Most jobs
  // never journal and find nothing in either.
  const out = rowJournals(store, rows);
  const seqs = rows.map((r) => r.seq);
  const merged = new Set<number>();
  for (const r of store.sql.exec<StepRow>(JOURNALS_OF, JSON.stringify(seqs)).toArray()) {
    const j = out.get(r.job_seq) ?? { start: null, entries: [] };
    // A start at position -1: a job journaled before the row kept its start (journal-row.ts); the row's wins.
    if (r.kind === "start") j.start ??= { at: r.started_at, seed: r.result ?? "" };
    else {
      j.entries.push(toEntry(r));
      merged.add(r.job_seq);
    }
    out.set(r.job_seq, j);
  }
  for (const seq of merged) out.get(seq)!.entries.sort((a, b) => a.seq - b.seq);
  return out;
}

/**
 * withJournal: a leased row with its journal, when it has one — a job back from a wait or a sleep replays from it,
 * whoever leases it (a pull claim, an inline claim of its key).
 */
export function withJournal(store: HomeStore, row: JobRow): JobRow & { journal?: Journal } {
  const journal = journalsOf(store, [row]).get(row.seq);
  return journal ? { ...row, journal } : row;
}

const RESULT_AT = "SELECT result FROM job_step WHERE job_seq = ? AND seq = ?";
/** The job's wait token of a name (one per name): job_step's key range of the job. */
export const TOKEN_OF_NAME = "SELECT seq, result FROM job_step WHERE job_seq = ? AND kind = 'token' AND name = ? LIMIT 1";

/**
 * appendStep: one journal write of the attempt holding `token`, in one transaction with the lease check. A `token`
 * write carries the signed token (signTokens) and answers the one journaled — the first, if it was sent twice.
 */
export function appendStep(store: HomeStore, w: JournalWrite, token: string, now: number): Outcome<{ row: JobRow; result?: string }> {
  return store.atomic(() => {
    const leased = jobRows(store.sql.exec(JOB_FIND_LEASED, now, w.id, token, idSeq(w.id)))[0];
    if (!leased) return leaseRefusal(store, w.id, token, now);
    const kind = w.op === "token" ? "token" : w.op === "patch" ? "patch" : "step";
    if (kind === "token") {
      if (w.result === null) return { ok: false, code: "refused", reason: "a wait token is signed with the queue's QUEUE_TOKEN, and none is set (wrangler secret put QUEUE_TOKEN)", state: leased.state };
      const other = store.sql.exec<{ seq: number }>(TOKEN_OF_NAME, leased.seq, w.name).toArray()[0];
      if (other && other.seq !== w.seq) return { ok: false, code: "refused", reason: `the job made a wait token named ${JSON.stringify(w.name)} already (step ${other.seq}): a job makes one token per name`, state: leased.state };
    }
    const finished = w.op !== "begin";
    const refused = writeStep(store, leased, { seq: w.seq, name: w.name, kind, result: finished ? w.result ?? "null" : null, startedAt: w.startedAt, finishedAt: finished ? now : null, wakeAt: null, sensitive: w.sensitive === true }, w.start);
    if (refused) return refused;
    if (kind !== "token") return { ok: true, row: leased };
    return { ok: true, row: leased, result: store.sql.exec<{ result: string }>(RESULT_AT, leased.seq, w.seq).one().result };
  });
}

/**
 * signTokens: each `token` write (ctx.createWaitToken, `{"timeoutMs"}`) with the signed token as its result
 * (job/wait-token.ts), before the transaction that journals it — Web Crypto signs asynchronously. Without a
 * QUEUE_TOKEN to sign with (or a job to bind it to), the result is null and appendStep refuses the write.
 */
export async function signTokens(store: WorkflowStore, writes: readonly JournalWrite[], now: number): Promise<JournalWrite[]> {
  return Promise.all(
    writes.map(async (w) => {
      if (w.op !== "token") return w;
      const job = getJob(store.sql, w.id);
      if (store.queueToken === null || !job) return { ...w, result: null };
      const timeoutMs = (JSON.parse(w.result ?? "{}") as { timeoutMs?: number | null }).timeoutMs ?? null;
      const parts = { jobId: w.id, name: w.name, expiresAt: timeoutMs === null ? null : now + timeoutMs, jobCreatedAt: job.created_at };
      return { ...w, result: JSON.stringify(await makeToken(store.queueToken, parts, store.config.publicUrl)) };
    }),
  );
}

/**
 * writeStep: checks and writes one row for the leased job (inside the caller's
 * transaction); a refusal when the write would break the journal's rules.
 */
/**
 * What one transaction that writes many entries (a fan-out's invokes) keeps between them: the journal's size, read
 * once and then kept by each write (n entries cost one read of the journal, not n), and whether the start record
 * is written.
 */
export type JournalSize = { n: number | null; started?: boolean };

/** The row at a journal position, as writeStep reads it (a caller that read it already passes it: null for none). */
export type StepAt = { name: string; kind: string; finished_at: number | null; bytes: number };

export function writeStep(
  store: HomeStore,
  job: JobRow,
  e: Omit<JournalEntry, "attempt"> & { ref?: string | null; sensitive?: boolean },
  start: JournalStart,
  size: JournalSize = { n: null },
  known?: StepAt | null,
): StepRefusal | null {
  // The entry at its position, in either part of the journal (nondeterminism and the cap check).
  const at = known === undefined ? store.sql.exec<StepAt>(ENTRIES_AT, job.seq, JSON.stringify([e.seq])).toArray()[0] : (known ?? undefined);
  if (at && (at.name !== e.name || at.kind !== e.kind)) {
    return { ok: false, code: "nondeterminism", reason: `NondeterminismError: step ${e.seq} is ${JSON.stringify(at.name)} in the journal, ${JSON.stringify(e.name)} in the code`, state: job.state };
  }
  // Written already (a finished step, or a write sent twice): the journal keeps the first.
  if (at && at.finished_at !== null) return null;
  const limits = store.config.limits;
  // Counted as its plain JSON, sealed or not (sealing/vault.ts plainBytes).
  const resultBytes = e.result === null ? 0 : plainBytes(e.result, limits.payloadMaxBytes);
  if (resultBytes > limits.payloadMaxBytes) {
    return { ok: false, code: "payload_too_large", reason: `step ${JSON.stringify(e.name)}: its result is larger than ${limits.payloadMaxBytes} bytes of JSON (limits.payloadMaxBytes)`, state: job.state };
  }
  const bytes = utf8Length(e.name, 1024) + resultBytes;
  // A step's value is stored sealed, and marked when the step is sensitive (sealing/lens.ts); the limits above are
  // the value's own bytes, as the handler sent it.
  if (e.kind === "step" && e.result !== null) e = { ...e, result: e.sensitive ? markSensitive(store.lens.seal(e.result)) : store.lens.seal(e.result) };
  // The row at this position (an atMostOnce step's start) is replaced, not added to.
  size.n ??= store.sql.exec<{ n: number }>(JOURNAL_BYTES, job.seq).one().n;
  const held = size.n - (at?.bytes ?? 0);
  if (held + bytes > limits.journalMaxBytes) {
    return { ok: false, code: "journal_too_large", reason: `journal_too_large: step ${JSON.stringify(e.name)} would take the job's journal past ${limits.journalMaxBytes} bytes (limits.journalMaxBytes)`, state: job.state };
  }
  // Finished and never changed after: one row written, the job's own (journal-row.ts); else a job_step row.
  const kept = rowKeeps(e, at !== undefined) && appendRowEntry(store, job.seq, start, { ...e, attempt: job.attempts }, bytes);
  if (!kept) {
    if (!size.started) writeRowStart(store, job.seq, start);
    store.sql.exec(STEP_UPSERT, job.seq, e.seq, e.name, e.kind, e.result, e.startedAt, e.finishedAt, job.attempts, e.wakeAt, bytes, e.ref ?? null);
  }
  size.started = true;
  size.n = held + bytes;
  store.feed.step(job.id, { seq: e.seq, name: e.name, kind: e.kind, startedAt: e.startedAt, finishedAt: e.finishedAt, attempt: job.attempts });
  return null;
}

const OPEN_STEPS_INSERT = `
INSERT INTO job_step (job_seq, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes, ref)
SELECT ?1, v.value ->> 0, v.value ->> 1, v.value ->> 2, NULL, v.value ->> 3, NULL, ?3, NULL, v.value ->> 4, v.value ->> 5 FROM json_each(?2) AS v`;

/** An open entry with no timeout, new at its position (a fan-out's invokes): writeOpenSteps journals them in one statement. */
export interface OpenStep {
  seq: number;
  name: string;
  kind: JournalEntry["kind"];
  startedAt: number;
  ref: string | null;
}

/**
 * writeOpenSteps: new open entries at free positions, in one statement — the journal's cap checked for them all
 * (their names' bytes) as writeStep checks one. The caller has seen each position empty.
 */
export function writeOpenSteps(store: HomeStore, job: JobRow, steps: readonly OpenStep[], start: JournalStart, size: JournalSize): StepRefusal | null {
  if (steps.length === 0) return null;
  const rows = steps.map((e) => [e.seq, e.name, e.kind, e.startedAt, utf8Length(e.name, 1024), e.ref]);
  const bytes = rows.reduce((n, r) => n + (r[4] as number), 0);
  size.n ??= store.sql.exec<{ n: number }>(JOURNAL_BYTES, job.seq).one().n;
  if (size.n + bytes > store.config.limits.journalMaxBytes) {
    return { ok: false, code: "journal_too_large", reason: `journal_too_large: ${steps.length} steps from ${JSON.stringify(steps[0]!.name)} on would take the job's journal past ${store.config.limits.journalMaxBytes} bytes (limits.journalMaxBytes)`, state: job.state };
  }
  if (!size.started) writeRowStart(store, job.seq, start);
  size.started = true;
  store.sql.exec(OPEN_STEPS_INSERT, job.seq, JSON.stringify(rows), job.attempts);
  size.n += bytes;
  return null;
}

/** listSteps: a job's journal as the API shows it (start record left out); null when there is no such job. */
export function listSteps(store: HomeStore, id: string): StepView[] | null {
  const job = getJob(store.sql, id);
  if (!job) return null;
  // A reader's view: opened, a sensitive type's or step's value redacted (sealing/lens.ts).
  return (journalsOf(store, [job]).get(job.seq)?.entries ?? []).map((e) => ({ ...e, result: e.result === null ? null : store.lens.show(e.result, job.type) }));
}

/** forgetUnfinished: a manual retry of a job runs its unfinished atMostOnce steps again (inside the retry's transaction). */
export function forgetUnfinished(store: HomeStore, jobSeq: number): void {
  store.sql.exec(UNFINISHED_DELETE, jobSeq);
}

/**
 * resolveStep: an operator says what an unfinished atMostOnce step did — its
 * result is journaled, and a failed or cancelled job goes back to pending (via
 * `retry`, which the caller runs in the same transaction).
 */
export function resolveStep(store: HomeStore, id: string, name: string, result: string, now: number, retry: (job: JobRow) => Outcome<{ row: JobRow }>): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    const job = getJob(store.sql, id);
    if (!job) return { ok: false, code: "not_found" };
    if (job.state === "running" || job.state === "waiting") return { ok: false, code: "conflict", reason: `the job is ${job.state}; resolve a step of a failed, cancelled or pending job`, state: job.state };
    if (job.state === "completed") return { ok: false, code: "already_terminal", state: job.state };
    const step = store.sql.exec<{ seq: number }>(UNFINISHED_BY_NAME, job.seq, name).toArray()[0];
    if (!step) return { ok: false, code: "conflict", reason: `no unfinished step named ${JSON.stringify(name)} in its journal`, state: job.state };
    const limits = store.config.limits;
    const bytes = plainBytes(result, limits.payloadMaxBytes);
    if (bytes > limits.payloadMaxBytes) return { ok: false, code: "payload_too_large", reason: `the result is larger than ${limits.payloadMaxBytes} bytes of JSON`, state: job.state };
    const held = store.sql.exec<{ n: number }>(JOURNAL_BYTES, job.seq).one().n;
    if (held + bytes > limits.journalMaxBytes) {
      return { ok: false, code: "journal_too_large", reason: `journal_too_large: the result would take the job's journal past ${limits.journalMaxBytes} bytes (limits.journalMaxBytes)`, state: job.state };
    }
    store.sql.exec("UPDATE job_step SET result = ?, finished_at = ?, bytes = bytes + ? WHERE job_seq = ? AND seq = ?", store.lens.seal(result), now, bytes, job.seq, step.seq);
    if (job.state === "pending") {
      store.touched(now);
      return { ok: true, row: job };
    }
    return retry(job);
  });
}

/** jobHasJournal: job_step's primary key (job_seq, seq). */
function toEntry(r: StepRow): JournalEntry {
  return { seq: r.seq, name: r.name, kind: r.kind as JournalKind, result: r.result, startedAt: r.started_at, finishedAt: r.finished_at, attempt: r.attempt, wakeAt: r.wake_at };
}
