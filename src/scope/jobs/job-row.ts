/**
 * A `job` row as SQLite returns it, and its mapping to the API's Job object.
 * Scope objects return rows (JSON still as text) so the parse work happens in
 * the stateless coordinator, not in the object that serializes every claim.
 *
 * @module
 */
import type { Job, LeasedJob, Scope } from "../../job/schemas";
import type { Journal } from "../../job/handler-contract";
import type { FailureKind, JobState } from "../../job/states";
import type { Lens } from "../../sealing/lens";

export type JobRow = {
  seq: number;
  id: string;
  type: string;
  payload: string;
  scope_type: string | null;
  scope_id: string | null;
  state: JobState;
  failure_kind: FailureKind | null;
  priority: number;
  run_at: number;
  attempts: number;
  max_attempts: number;
  timeout_ms: number | null;
  dedupe_key: string | null;
  dedupe_mode: string | null;
  scheduled_for: number | null;
  /** JSON {kind, baseMs, maxMs}, or null: the type's backoff. */
  backoff: string | null;
  tags: string;
  last_error: string | null;
  result: string | null;
  cancel_reason: string | null;
  lease_token: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  lease_ms: number | null;
  /** 0: a pushed attempt whose lease the object holds in memory, without a job_lease_idx entry (pushed-leases.ts). */
  lease_kept: number;
  /** 1: a pending retry its object's dispatcher holds, without a job_claim_idx entry (held-retries.ts). */
  held: number;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** A waiting job's waits (JSON: scope/workflow/waits.ts WaitView[], a pause among them: job-pause.ts); null in every other state. */
  wait: string | null;
  /** A child job's parent (ctx.invoke; scope/workflow/invokes.ts), and the step it waits under; null otherwise. */
  parent_id: string | null;
  parent_step: string | null;
  /** The value its type's keyed limits count it under (job/limit-key.ts), or null. */
  limit_key: string | null;
  /** When it expires if not started by then (scope/jobs/expiry.ts), or null. */
  expires_at: number | null;
  /** The latest ctx.progress as JSON text (job/progress.ts), and when it was reported; null until one is. */
  progress: string | null;
  progress_at: number | null;
  /** JSON {url, on}: where its end is POSTed (callbacks.ts), or null. */
  callback: string | null;
  /** JSON {traceparent, tracestate?}: the trace context its enqueue carried (job/trace.ts), or null. */
  trace: string | null;
  /** The job this one reruns, and (a JSON array of ids) the reruns made of this one (scope/workflow/rerun.ts); null otherwise. */
  rerun_of: string | null;
  reruns: string | null;
  /** The version of the code that ran its latest ended attempt (docs/deploy.md "Code that changes under running jobs"), or null. */
  code_version: string | null;
  /** 1: a running job asked to pause (job-pause.ts); null otherwise. */
  pause_asked: number | null;
};

/** A pause among a job's waits, as the API shows it (job-pause.ts writes the same entry in SQL): `kind` first, as its mark wants. */
export const PAUSE_VIEW = { kind: "pause", name: "pause", until: null, dueAt: null } as const;

/** The job table's columns, each the name of a JobRow field: `jobRows` finds each in a statement's columns. */
type JobColumn = keyof JobRow;

/**
 * jobRows: a statement's job rows (`SELECT *`, `RETURNING *`) as JobRow objects, read as arrays and built here.
 * The cursor's own toArray() builds each object one property at a time through the runtime: a 100-row claim
 * or complete took ~35% longer that way in the test runtime (docs/design.md, What a push batch costs).
 */
export function jobRows(cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): JobRow[] {
  const at = {} as Record<JobColumn, number>;
  cursor.columnNames.forEach((name, i) => {
    at[name as JobColumn] = i;
  });
  // The runtime's raw cursor has toArray() (one call for all rows); its type does not say so.
  const raw = cursor.raw() as IterableIterator<SqlStorageValue[]> & { toArray?: () => SqlStorageValue[][] };
  const rows = (raw.toArray ? raw.toArray() : [...raw]) as never[][];
  // Typed by the table (src/tables/scope.ts), as the generic exec<JobRow>() was.
  const built = rows.map((r) => ({
    seq: r[at.seq]!,
    id: r[at.id]!,
    type: r[at.type]!,
    payload: r[at.payload]!,
    scope_type: r[at.scope_type]!,
    scope_id: r[at.scope_id]!,
    state: r[at.state]!,
    failure_kind: r[at.failure_kind]!,
    priority: r[at.priority]!,
    run_at: r[at.run_at]!,
    attempts: r[at.attempts]!,
    max_attempts: r[at.max_attempts]!,
    timeout_ms: r[at.timeout_ms]!,
    dedupe_key: r[at.dedupe_key]!,
    dedupe_mode: r[at.dedupe_mode]!,
    scheduled_for: r[at.scheduled_for]!,
    backoff: r[at.backoff]!,
    tags: r[at.tags]!,
    last_error: r[at.last_error]!,
    result: r[at.result]!,
    cancel_reason: r[at.cancel_reason]!,
    lease_token: r[at.lease_token]!,
    lease_owner: r[at.lease_owner]!,
    lease_expires_at: r[at.lease_expires_at]!,
    lease_ms: r[at.lease_ms]!,
    lease_kept: r[at.lease_kept]!,
    held: at.held === undefined ? 0 : r[at.held]!,
    created_at: r[at.created_at]!,
    updated_at: r[at.updated_at]!,
    started_at: r[at.started_at]!,
    finished_at: r[at.finished_at]!,
    // A statement that names its columns may leave it out (undefined reads as none).
    wait: at.wait === undefined ? null : r[at.wait]!,
    parent_id: at.parent_id === undefined ? null : r[at.parent_id]!,
    parent_step: at.parent_step === undefined ? null : r[at.parent_step]!,
    limit_key: at.limit_key === undefined ? null : r[at.limit_key]!,
    expires_at: at.expires_at === undefined ? null : r[at.expires_at]!,
    progress: at.progress === undefined ? null : r[at.progress]!,
    progress_at: at.progress_at === undefined ? null : r[at.progress_at]!,
    callback: at.callback === undefined ? null : r[at.callback]!,
    trace: at.trace === undefined ? null : r[at.trace]!,
    rerun_of: at.rerun_of === undefined ? null : r[at.rerun_of]!,
    reruns: at.reruns === undefined ? null : r[at.reruns]!,
    code_version: at.code_version === undefined ? null : r[at.code_version]!,
    pause_asked: at.pause_asked === undefined ? null : r[at.pause_asked]!,
  }));
  const journal = (at as Record<string, number | undefined>).journal;
  if (journal !== undefined) built.forEach((row, i) => journals.set(row, rows[i]![journal] as unknown as string | null));
  return built;
}

/** oneJobRow: the statement's one job row (as a cursor's one() is: it throws for none or several). */
export function oneJobRow(cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): JobRow {
  const rows = jobRows(cursor);
  if (rows.length !== 1) throw new Error(`expected one job row, got ${rows.length}`);
  return rows[0]!;
}

/**
 * The `journal` column of the rows jobRows built from a statement that read it (scope/workflow/journal-row.ts),
 * kept beside each row and not as a field: rows go over RPC to the coordinator, which never needs it, and whoever
 * leases a row reads its journal without a statement of its own.
 */
const journals = new WeakMap<JobRow, string | null>();

/** rowJournalText: a row's `journal` column as its statement read it; undefined when the statement did not read it. */
export function rowJournalText(row: JobRow): string | null | undefined {
  return journals.get(row);
}

/** scopeOfRow: the scope a row's two columns name, or null for an unscoped job (job and schedule rows alike). */
export function scopeOfRow(row: { scope_type: string | null; scope_id: string | null }): Scope | null {
  return row.scope_type !== null && row.scope_id !== null ? { type: row.scope_type, id: row.scope_id } : null;
}

/**
 * toJob: a row as a reader's view — `"[redacted]"` for a sensitive type's values and a sensitive step's; sealed values
 * stay sealed, opened where the view leaves (sealing/lens.ts; docs/operating.md "Encryption at rest").
 */
export function toJob(row: JobRow, lens: Lens): Job {
  return viewOf(row, lens.show(row.payload, row.type), row.result === null ? null : lens.show(row.result, row.type), row.progress ? lens.show(row.progress, row.type) : null);
}

function viewOf(row: JobRow, payload: unknown, result: unknown, progress: unknown): Job {
  return {
    id: row.id,
    type: row.type,
    payload: payload as Job["payload"],
    scope: scopeOfRow(row),
    state: row.state,
    failureKind: row.failure_kind,
    priority: row.priority,
    runAt: row.run_at,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    dedupeKey: row.dedupe_key,
    tags: JSON.parse(row.tags),
    lastError: row.last_error,
    result: result as Job["result"],
    cancelReason: row.cancel_reason,
    dedupeMode: row.dedupe_mode,
    scheduledFor: row.scheduled_for,
    backoff: row.backoff === null ? null : JSON.parse(row.backoff),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    // A running job asked to pause shows the pause it will enter (job-pause.ts).
    waitingFor: row.wait ? (JSON.parse(row.wait) as Job["waitingFor"]) : row.pause_asked === 1 ? [{ ...PAUSE_VIEW }] : null,
    parentId: row.parent_id ?? null,
    concurrencyKey: row.limit_key ?? null,
    expiresAt: row.expires_at ?? null,
    progress: progress as Job["progress"],
    progressAt: row.progress_at ?? null,
    callback: row.callback ? (JSON.parse(row.callback) as Job["callback"]) : null,
    trace: row.trace ? (JSON.parse(row.trace) as Job["trace"]) : null,
    rerunOf: row.rerun_of ?? null,
    reruns: row.reruns ? (JSON.parse(row.reruns) as string[]) : [],
    codeVersion: row.code_version ?? null,
  };
}

/**
 * toLeasedJob: a leased row as its claimer — the handler — is sent it (sensitive steps' marks off, sealed values
 * opened by the caller: sealing/rpc-values.ts), with the token the worker must present and its journal when it has one.
 */
export function toLeasedJob(row: JobRow & { journal?: Journal }, lens: Lens): LeasedJob {
  if (row.lease_token === null || row.lease_expires_at === null) throw new Error(`job ${row.id} has no lease`);
  const open = (text: string) => JSON.parse(lens.handlerText(text)) as unknown;
  const view = viewOf(row, open(row.payload), row.result === null ? null : open(row.result), row.progress ? open(row.progress) : null);
  const leased = { ...view, leaseToken: row.lease_token, leaseExpiresAt: row.lease_expires_at, ...(lens.sensitive(row.type) ? { sensitive: true as const } : {}) };
  return row.journal ? { ...leased, journal: handlerJournal(row.journal, lens) } : leased;
}

/** handlerJournal: a journal as its handler replays it — each entry's result without a sensitive step's mark (sealing/lens.ts). */
export function handlerJournal(journal: Journal, lens: Lens): Journal {
  return { ...journal, entries: journal.entries.map((e) => (e.result === null ? e : { ...e, result: lens.handlerText(e.result) })) };
}

/**
 * attemptDeadline: when the running attempt's `timeoutMs` ends it (its start plus the timeout); null without one.
 * The one "timed out" rule: the reap pass, a refused holder's write and the dispatcher's calls all read it.
 */
export function attemptDeadline(row: Pick<JobRow, "timeout_ms" | "started_at">): number | null {
  return row.timeout_ms !== null && row.started_at !== null ? row.started_at + row.timeout_ms : null;
}

/** timedOut: whether the attempt's `timeoutMs` had run out at `at`. */
export function timedOut(row: Pick<JobRow, "timeout_ms" | "started_at">, at: number): boolean {
  const deadline = attemptDeadline(row);
  return deadline !== null && at >= deadline;
}
