/**
 * Signals and wait tokens' completions (docs/workflows.md): one ends the job's oldest open wait of its kind and name
 * and puts the job back to pending, due now; one that arrives before the job waits for it is kept (`job_signal`,
 * `signals.retainMs`; a token's completion until the token expires) and taken by the wait when it comes (waits.ts).
 * A token's completion is checked against the journal of the job it names.
 *
 * @module
 */
import { plainBytes } from "../../sealing/vault";
import { parseToken } from "../../job/wait-token";
import type { HomeStore } from "../jobs/home-store";
import type { JobRow } from "../jobs/job-row";
import type { Outcome } from "../jobs/outcome";
import { getJob, liveJobsOfKey } from "../jobs/read";
import { TOKEN_OF_NAME } from "./steps";
import { describe, endWait, journalFull, resume, WAIT_FOREVER, WAIT_KIND, type SignalKind, type WaitView } from "./wait-entries";

/** Signals kept for one job at most (sent before it waits for them); one more is refused. */
export const KEPT_SIGNALS_MAX = 100;

/** The job's oldest open wait of a kind and name (job_step's key range of the job). */
const OPEN_WAIT_OF = "SELECT seq FROM job_step WHERE job_seq = ? AND kind = ? AND name = ? AND finished_at IS NULL ORDER BY seq LIMIT 1";
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


/** What a signal did: it ended the job's wait (`resumed`), or it is kept for the job's next wait of its name. */
export type SignalOutcome = Outcome<{ row: JobRow; resumed: boolean }>;

/**
 * What the object answers a signal with: the job, whether the signal ended its wait, and what the job waits for
 * now — so a signal kept by a job that waits for something else (a misspelled name) says so, instead of leaving
 * the job waiting in silence.
 */
export type SignalAnswer = Outcome<{ id: string; resumed: boolean; waitingFor: WaitView[] | null }>;

export function signalAnswer(out: SignalOutcome): SignalAnswer {
  return out.ok ? { ok: true, id: out.row.id, resumed: out.resumed, waitingFor: out.row.wait === null ? null : (JSON.parse(out.row.wait) as WaitView[]) } : out;
}

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
  const bytes = plainBytes(data, store.config.limits.payloadMaxBytes);
  if (bytes > store.config.limits.payloadMaxBytes) {
    return { ok: false, code: "payload_too_large", reason: `data is larger than ${store.config.limits.payloadMaxBytes} bytes of JSON (limits.payloadMaxBytes)`, state: job.state };
  }
  // The data sealed inside the wait's answer the queue wraps around it (sealing/lens.ts finds it there).
  const result = `{"data":${store.lens.seal(data)}}`;
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

/** sweepKeptSignals: drop kept signals past their retention, a batch at a time (the sweep pass). */
export function sweepKeptSignals(store: HomeStore, now: number, limit: number): number {
  return store.sql.exec(KEPT_EXPIRED_DELETE, now, limit).toArray().length;
}

export function takeKept(store: HomeStore, jobSeq: number, kind: SignalKind, name: string, now: number): string | null {
  const kept = store.sql.exec<{ n: number; data: string }>(KEPT_OLDEST, jobSeq, kind, name, now).toArray()[0];
  if (!kept) return null;
  store.sql.exec(KEPT_DELETE, jobSeq, kind, name, kept.n);
  return kept.data;
}
