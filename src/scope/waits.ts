/**
 * Waits (docs/workflows.md): a running attempt that ends on `ctx.waitForSignal` or `ctx.waitForToken` puts its job
 * in the state `waiting` — no lease, call, permit or attempt held — with each wait journaled at its position (an
 * open row of `job_step`: result null until it ends). A signal or a token's completion ends the wait it names and
 * puts the job back to pending, due now, so it runs again and replays to the wait, which now answers. One that
 * arrives before the job waits for it is kept (`job_signal`, `signals.retainMs`) and taken by the wait when it
 * comes. A wait's timeout is the job's `run_at` while it waits (job_wait_idx); the alarm ends the waits whose
 * timeout passed (`endTimedOut`), answering null.
 *
 * @module
 */
import type { JournalStart, WaitItem } from "../job/handler-contract";
import { utf8Length } from "../job/json-size";
import { sqlList } from "../job/states";
import { TRANSITIONS } from "../job/transitions";
import { applyAttemptEnd } from "./attempt-end";
import type { HomeStore } from "./home-store";
import { jobRows, type JobRow } from "./job-row";
import { JOB_FIND_LEASED, leaseRefusal } from "./lease";
import type { Outcome } from "./outcome";
import { getJob, idSeq, liveJobsOfKey } from "./read";
import { JOURNAL_BYTES, TOKEN_OF_NAME, writeOpenSteps, writeStep, type JournalSize, type OpenStep, type StepAt } from "./steps";
import { noteLastTransition } from "./timeline";
import { parseToken } from "../job/wait-token";
import { journalInvoke, oweChildren, type OwedJob } from "./invokes";
import { oweRegistration } from "./event-waits";

/** A waiting job's run_at when none of its waits has a timeout: the latest time a Date can hold. */
export const WAIT_FOREVER = 8_640_000_000_000_000;
/** Signals kept for one job at most (sent before it waits for them); one more is refused. */
export const KEPT_SIGNALS_MAX = 100;

/** What a channel's signal ends: a signal ends a `signal` wait, a token's completion a `token_wait`. */
export type SignalKind = "signal" | "token";
const WAIT_KIND = { signal: "signal", token: "token_wait" } as const satisfies Record<SignalKind, WaitItem["kind"]>;
const SIGNAL_KIND = { signal: "signal", token_wait: "token" } as const satisfies Record<Exclude<WaitItem["kind"], "invoke" | "event">, SignalKind>;

/** What a waiting job's `wait` column holds, and the API's `waitingFor`. */
export interface WaitView {
  kind: "signal" | "token" | "invoke" | "event";
  name: string;
  /** Its timeout (epoch ms), or null for none. */
  until: number | null;
  /** invoke: the child job's id. */
  child?: string;
}

/** The journal row at a position. */
/** The journal rows at the waits' positions, in one read (job_step's key). */
const ENTRIES_AT = "SELECT seq, kind, name, finished_at, wake_at, ref, bytes FROM job_step WHERE job_seq = ?1 AND seq IN (SELECT value FROM json_each(?2))";
/** The job's oldest open wait of a kind and name (job_step's key range of the job). */
const OPEN_WAIT_OF = "SELECT seq FROM job_step WHERE job_seq = ? AND kind = ? AND name = ? AND finished_at IS NULL ORDER BY seq LIMIT 1";
/** An open wait ends: its result, and its bytes counted in the journal's size. */
const WAIT_END = "UPDATE job_step SET result = ?3, finished_at = ?4, bytes = bytes + ?5 WHERE job_seq = ?1 AND seq = ?2 AND finished_at IS NULL";
/** The open waits whose timeout passed end with null. */
const WAITS_TIME_OUT = "UPDATE job_step SET result = 'null', finished_at = ?2 WHERE job_seq = ?1 AND kind IN ('signal', 'token_wait', 'event') AND finished_at IS NULL AND wake_at <= ?2 RETURNING name";

/** The oldest kept, unexpired signal of a kind and name (job_signal's key). */
const KEPT_OLDEST = "SELECT n, data FROM job_signal WHERE job_seq = ?1 AND kind = ?2 AND name = ?3 AND expires_at > ?4 ORDER BY n LIMIT 1";
const KEPT_DELETE = "DELETE FROM job_signal WHERE job_seq = ? AND kind = ? AND name = ? AND n = ?";
const KEPT_COUNT = "SELECT count(*) AS n FROM job_signal WHERE job_seq = ?";
const KEPT_INSERT = `
INSERT INTO job_signal (job_seq, kind, name, n, data, sent_at, expires_at)
SELECT ?1, ?2, ?3, coalesce((SELECT max(n) FROM job_signal WHERE job_seq = ?1 AND kind = ?2 AND name = ?3), 0) + 1, ?4, ?5, ?6`;
/** Kept signals of a kind and name, expired or not (a token completes once: a second completion is refused). */
const KEPT_ANY = "SELECT 1 FROM job_signal WHERE job_seq = ? AND kind = ? AND name = ? LIMIT 1";
const ENDED_OF = "SELECT 1 FROM job_step WHERE job_seq = ? AND kind = ? AND name = ? AND finished_at IS NOT NULL LIMIT 1";
/** Expired kept signals, a batch at a time (the sweep). */
const KEPT_EXPIRED_DELETE = `
DELETE FROM job_signal WHERE (job_seq, kind, name, n) IN (SELECT job_seq, kind, name, n FROM job_signal WHERE expires_at <= ? LIMIT ?) RETURNING n`;

/** jobWaitIfLeased: running → waiting, the attempt given back, its lease gone; run_at is the earliest timeout. */
const JOB_WAIT_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.wait.to}', wait = ?3, run_at = ?4, attempts = max(attempts - 1, 0), updated_at = ?5,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL
 WHERE seq = ?1 AND state IN (${sqlList(TRANSITIONS.wait.from)}) AND lease_token = ?2
RETURNING *`;
/** jobResume: waiting → pending, due now. */
const JOB_RESUME = `
UPDATE job SET state = '${TRANSITIONS.resume.to}', wait = NULL, run_at = ?2, updated_at = ?2
 WHERE seq = ?1 AND state IN (${sqlList(TRANSITIONS.resume.from)})
RETURNING *`;
/** jobWaitsTimedOut: job_wait_idx. */
const JOB_WAITS_TIMED_OUT = "SELECT * FROM job WHERE state = 'waiting' AND run_at <= ? ORDER BY run_at LIMIT ?";

export interface WaitInput {
  waits: WaitItem[];
  start: JournalStart;
}

/**
 * wait: the attempt holding `token` ends on these waits (one transaction, fenced by the lease). Each is journaled
 * open at its position — or ended at once by a signal kept for it —, and the job waits; if one has ended (or
 * there is none left to wait for), it goes back to pending, due now, and replays to it.
 */
export function wait(store: HomeStore, id: string, token: string, input: WaitInput, now: number): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    const leased = jobRows(store.sql.exec(JOB_FIND_LEASED, now, id, token, idSeq(id)))[0];
    if (!leased) return leaseRefusal(store, id, token, now);
    // A wait the journal cannot take: every replay would end here again, so the job fails now, saying why.
    const failWith = (error: string): Outcome<{ row: JobRow }> => {
      const failed = applyAttemptEnd(store, leased, { to: "failed", failureKind: "fatal", error }, now);
      if (!failed) return leaseRefusal(store, id, token, now);
      store.touched(now);
      return { ok: true, row: failed };
    };
    const open: WaitView[] = [];
    const children: { home: string; job: OwedJob }[] = [];
    // Kept by each journal write of this wait: a fan-out's invokes read the journal's size once (steps.ts).
    const size: JournalSize = { n: null };
    const fresh: OpenStep[] = [];
    const held = new Map(
      store.sql
        .exec<StepAt & { seq: number; wake_at: number | null; ref: string | null }>(ENTRIES_AT, leased.seq, JSON.stringify(input.waits.map((w) => w.seq)))
        .toArray()
        .map((r) => [r.seq, r]),
    );
    let ended: string | null = null;
    for (const w of input.waits) {
      const at = held.get(w.seq);
      let until: number | null;
      if (at && at.kind === w.kind && at.name === w.name) {
        if (at.finished_at !== null) {
          ended ??= `${describe(w.kind, w.name)} had ended`;
          continue;
        }
        if (w.kind === "invoke") {
          open.push({ kind: "invoke", name: w.name, until: null, child: at.ref ?? undefined });
          continue;
        }
        until = at.wake_at;
      } else if (w.kind === "invoke") {
        // A new child: journaled with its id, its enqueue owed below (invokes.ts).
        const child = journalInvoke(store, leased, w, now, at ?? null);
        if ("refused" in child) return failWith(child.refused);
        children.push(child);
        fresh.push(child.step);
        open.push({ kind: "invoke", name: w.name, until: null, child: child.job.id });
        continue;
      } else {
        until = w.until ?? (w.timeoutMs === undefined || w.timeoutMs === null ? null : now + w.timeoutMs);
        // An event wait keeps its match (in ref), so a retry by hand can register it again (event-waits.ts).
        const ref = w.kind === "event" ? JSON.stringify(w.match ?? {}) : null;
        const refused = writeStep(store, leased, { seq: w.seq, name: w.name, kind: w.kind, result: null, startedAt: w.startedAt, finishedAt: null, wakeAt: until, ref }, input.start, size, at ?? null);
        // Its cap, or another step at its position.
        if (refused) return failWith(refused.reason);
        // A new event wait registers with its topic's registry (event-waits.ts); a timeout passed already needs none.
        if (w.kind === "event" && (until === null || until > now)) {
          oweRegistration(store, { jobId: leased.id, seq: w.seq, topic: w.name, match: w.match ?? {}, since: now, until }, now);
        }
      }
      if (w.kind === "event") {
        if (until !== null && until <= now) {
          endWait(store, leased.seq, w.seq, "null", now);
          ended ??= `${describe(w.kind, w.name)} timed out`;
        } else open.push({ kind: "event", name: w.name, until });
        continue;
      }

      const kept = takeKept(store, leased.seq, SIGNAL_KIND[w.kind], w.name, now);
      if (kept !== null && journalFull(store, leased.seq, kept)) {
        return failWith(`journal_too_large: the kept ${describe(w.kind, w.name)} would take the job's journal past ${store.config.limits.journalMaxBytes} bytes (limits.journalMaxBytes)`);
      }
      if (kept !== null) {
        endWait(store, leased.seq, w.seq, kept, now);
        ended ??= `${describe(w.kind, w.name)} had arrived`;
      } else if (until !== null && until <= now) {
        endWait(store, leased.seq, w.seq, "null", now);
        ended ??= `${describe(w.kind, w.name)} timed out`;
      } else open.push({ kind: SIGNAL_KIND[w.kind], name: w.name, until });
    }
    const refused = writeOpenSteps(store, leased, fresh, input.start, size);
    if (refused) return failWith(refused.reason);
    if (input.waits.some((w) => w.kind === "invoke")) oweChildren(store, leased, children, now);
    if (ended !== null || open.length === 0) {
      // Nothing left to wait for: back to pending, due now and unspent, as a zero sleep would.
      const row = applyAttemptEnd(store, leased, { to: "pending", runAt: now, attempts: Math.max(leased.attempts - 1, 0), error: leased.last_error }, now);
      if (!row) return leaseRefusal(store, id, token, now);
      if (row.state === "pending") note(store, row.seq, ended ?? "no wait left open");
      store.touched(now);
      return { ok: true, row };
    }
    const runAt = Math.min(...open.map((w) => w.until ?? WAIT_FOREVER));
    const row = jobRows(store.sql.exec(JOB_WAIT_IF_LEASED, leased.seq, token, JSON.stringify(open), runAt, now))[0];
    if (!row) return leaseRefusal(store, id, token, now);
    note(store, row.seq, `waiting for ${describeOpen(open)}`);
    store.touched(now);
    return { ok: true, row };
  });
}

/** What a signal did: it ended the job's wait (`resumed`), or it is kept for the job's next wait of its name. */
export type SignalOutcome = Outcome<{ row: JobRow; resumed: boolean }>;

/**
 * signal: a signal (or a token's completion) for the job `id`. It ends the job's oldest open wait of its kind and
 * name and puts the job back to pending, due now; with none open it is kept for the wait to come. A finished job
 * refuses it (`already_terminal`); so does a token completed before (`conflict`, token only).
 */
export function signal(store: HomeStore, id: string, kind: SignalKind, name: string, data: string, now: number): SignalOutcome {
  return store.atomic(() => {
    const job = getJob(store.sql, id);
    if (!job) return { ok: false, code: "not_found" };
    return signalJob(store, job, kind, name, data, now);
  });
}

/**
 * signalJob: signal, for a job already read (inside the caller's transaction). A token's completion that arrives
 * before its wait is kept until the token expires (or the job ends, for one that never does), not signals.retainMs:
 * its sender was answered 202, and a token completes once.
 */
function signalJob(store: HomeStore, job: JobRow, kind: SignalKind, name: string, data: string, now: number, tokenExpiresAt: number | null = null): SignalOutcome {
  if (job.finished_at !== null) return { ok: false, code: "already_terminal", state: job.state };
  const waitKind = WAIT_KIND[kind];
  if (kind === "token" && (store.sql.exec(KEPT_ANY, job.seq, kind, name).toArray().length > 0 || store.sql.exec(ENDED_OF, job.seq, waitKind, name).toArray().length > 0)) {
    return { ok: false, code: "conflict", reason: `wait token ${JSON.stringify(name)} was completed already`, state: job.state };
  }
  const bytes = utf8Length(data, store.config.limits.payloadMaxBytes);
  if (bytes > store.config.limits.payloadMaxBytes) {
    return { ok: false, code: "payload_too_large", reason: `data is larger than ${store.config.limits.payloadMaxBytes} bytes of JSON (limits.payloadMaxBytes)`, state: job.state };
  }
  const result = `{"data":${data}}`;
  const open = job.state === "waiting" ? store.sql.exec<{ seq: number }>(OPEN_WAIT_OF, job.seq, waitKind, name).toArray()[0] : undefined;
  if (open) {
    if (journalFull(store, job.seq, result)) {
      return { ok: false, code: "payload_too_large", reason: `journal_too_large: the data would take the job's journal past ${store.config.limits.journalMaxBytes} bytes (limits.journalMaxBytes)`, state: job.state };
    }
    endWait(store, job.seq, open.seq, result, now);
    const row = resume(store, job.seq, `${describe(waitKind, name)} arrived`, now);
    if (!row) return { ok: false, code: "conflict", reason: "the job stopped waiting", state: job.state };
    store.touched(now);
    return { ok: true, row, resumed: true };
  }
  if (store.sql.exec<{ n: number }>(KEPT_COUNT, job.seq).one().n >= KEPT_SIGNALS_MAX) {
    return { ok: false, code: "conflict", reason: `the job holds ${KEPT_SIGNALS_MAX} signals it has not waited for yet; no more are kept`, state: job.state };
  }
  const keepUntil = kind === "token" ? (tokenExpiresAt ?? WAIT_FOREVER) : now + store.config.signals.retainMs;
  store.sql.exec(KEPT_INSERT, job.seq, kind, name, result, now, keepUntil);
  return { ok: true, row: job, resumed: false };
}

/** signalKey: a signal for the live job of `type` holding the key here — a waiting one first, then a running one, then a pending one. */
export function signalKey(store: HomeStore, type: string, dedupeKey: string, name: string, data: string, now: number): SignalOutcome {
  return store.atomic((): SignalOutcome => {
    const live = liveJobsOfKey(store.sql, dedupeKey).filter((r) => r.type === type);
    const job = live.find((r) => r.state === "waiting") ?? live.find((r) => r.state === "running") ?? live[0];
    return job ? signalJob(store, job, "signal", name, data, now) : { ok: false, code: "not_found" };
  });
}

/**
 * completeToken: a wait token's completion — only a token the job it names journaled, word for word (so its
 * signature too: the coordinator checked it before routing, job/wait-token.ts), before its expiry. The checks
 * read only, so a stray token writes nothing.
 */
export function completeToken(store: HomeStore, token: string, data: string, now: number): SignalOutcome {
  return store.atomic((): SignalOutcome => {
    const parts = parseToken(token);
    const job = parts ? getJob(store.sql, parts.jobId) : null;
    if (!parts || !job || job.created_at !== parts.jobCreatedAt) return { ok: false, code: "not_found" };
    const made = store.sql.exec<{ result: string | null }>(TOKEN_OF_NAME, job.seq, parts.name).toArray()[0];
    if (!made?.result || (JSON.parse(made.result) as { id?: string }).id !== token) return { ok: false, code: "not_found" };
    if (parts.expiresAt !== null && parts.expiresAt <= now) return { ok: false, code: "gone", reason: `the wait token expired at ${new Date(parts.expiresAt).toISOString()}` };
    return signalJob(store, job, "token", parts.name, data, now, parts.expiresAt);
  });
}

/** endTimedOut: the waiting jobs whose earliest timeout passed, their timed-out waits ended (null) and back to pending. */
export function endTimedOut(store: HomeStore, now: number, limit = 500): { rows: JobRow[]; more: boolean } {
  return store.atomic(() => {
    const due = jobRows(store.sql.exec(JOB_WAITS_TIMED_OUT, now, limit));
    const rows: JobRow[] = [];
    for (const job of due) {
      const names = store.sql.exec<{ name: string }>(WAITS_TIME_OUT, job.seq, now).toArray().map((r) => r.name);
      const row = resume(store, job.seq, names.length > 0 ? `timed out: ${names.map((n) => JSON.stringify(n)).join(", ")}` : "timed out", now);
      if (row) rows.push(row);
    }
    if (rows.length > 0) store.touched(now);
    return { rows, more: due.length === limit };
  });
}

/** sweepKeptSignals: drop kept signals past their retention, a batch at a time (the sweep pass). */
export function sweepKeptSignals(store: HomeStore, now: number, limit: number): number {
  return store.sql.exec(KEPT_EXPIRED_DELETE, now, limit).toArray().length;
}

/** journalFull: whether `result` would take the job's journal past limits.journalMaxBytes. */
function journalFull(store: HomeStore, jobSeq: number, result: string): boolean {
  return store.sql.exec<{ n: number }>(JOURNAL_BYTES, jobSeq).one().n + utf8Length(result, 0) > store.config.limits.journalMaxBytes;
}

function takeKept(store: HomeStore, jobSeq: number, kind: SignalKind, name: string, now: number): string | null {
  const kept = store.sql.exec<{ n: number; data: string }>(KEPT_OLDEST, jobSeq, kind, name, now).toArray()[0];
  if (!kept) return null;
  store.sql.exec(KEPT_DELETE, jobSeq, kind, name, kept.n);
  return kept.data;
}

function endWait(store: HomeStore, jobSeq: number, seq: number, result: string, now: number): void {
  store.sql.exec(WAIT_END, jobSeq, seq, result, now, utf8Length(result, 0));
}

/**
 * endEventWait: an event ends the open event wait at `seq` (inside event-waits.ts eventArrived's transaction); a
 * waiting job is due again. An event that would take the journal past its cap ends the wait with null, as a timeout.
 */
export function endEventWait(store: HomeStore, job: JobRow, seq: number, event: string, now: number): JobRow | null {
  const result = journalFull(store, job.seq, event) ? "null" : event;
  endWait(store, job.seq, seq, result, now);
  store.touched(now);
  return job.state === "waiting" ? resume(store, job.seq, `an event on ${JSON.stringify(JSON.parse(event).topic)} arrived`, now) : null;
}

/** resume: a waiting job back to pending, due now, the timeline saying why (null: it was not waiting). */
export function resume(store: HomeStore, jobSeq: number, why: string, now: number): JobRow | null {
  const row = jobRows(store.sql.exec(JOB_RESUME, jobSeq, now))[0] ?? null;
  if (row) note(store, jobSeq, why);
  return row;
}

function note(store: HomeStore, jobSeq: number, text: string): void {
  noteLastTransition(store.sql, jobSeq, text.slice(0, 500));
}

const KIND_WORDS = { signal: "signal", token_wait: "wait token", token: "wait token", invoke: "child", event: "event on" } as const;

function describe(kind: WaitItem["kind"], name: string): string {
  return `${KIND_WORDS[kind]} ${JSON.stringify(name)}`;
}

/** describeOpen: the open waits, a fan-out's children summed up rather than listed one by one. */
function describeOpen(open: readonly WaitView[]): string {
  const children = open.filter((w) => w.kind === "invoke");
  const others = open.filter((w) => w.kind !== "invoke").map(describeView);
  if (children.length > 3) others.push(`${children.length} children (${children.slice(0, 3).map((w) => JSON.stringify(w.name)).join(", ")}, …)`);
  else others.push(...children.map(describeView));
  return others.join(", ");
}

function describeView(w: WaitView): string {
  return `${KIND_WORDS[w.kind]} ${JSON.stringify(w.name)}${w.until === null ? "" : ` until ${new Date(w.until).toISOString()}`}`;
}
