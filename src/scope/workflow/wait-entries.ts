/**
 * What waits and signals share (waits.ts, signals.ts; docs/workflows.md): the kinds a signal ends, the view a
 * waiting job shows, ending one open wait, putting a waiting job back to pending with the timeline saying why, and
 * the words for both.
 *
 * @module
 */
import { plainBytes } from "../../sealing/vault";
import type { WaitItem } from "../../job/handler-contract";
import { sqlList } from "../../job/states";
import { TRANSITIONS } from "../../job/transitions";
import type { HomeStore } from "../jobs/home-store";
import { jobRows, type JobRow } from "../jobs/job-row";
import { JOURNAL_BYTES } from "./steps";
import { noteLastTransition } from "../jobs/timeline";
import { keepPaused, PAUSED_SQL } from "../jobs/job-pause";

export { WAIT_FOREVER } from "../jobs/job-pause";

/** What a channel's signal ends: a signal ends a `signal` wait, a token's completion a `token_wait`. */
export type SignalKind = "signal" | "token";
export const WAIT_KIND = { signal: "signal", token: "token_wait" } as const satisfies Record<SignalKind, WaitItem["kind"]>;
export const SIGNAL_KIND = { signal: "signal", token_wait: "token" } as const satisfies Record<Exclude<WaitItem["kind"], "invoke" | "event">, SignalKind>;

/** What a waiting job's `wait` column holds, and the API's `waitingFor`. */
export interface WaitView {
  /** pause: the job is paused, or asked to pause (jobs/job-pause.ts). */
  kind: "signal" | "token" | "invoke" | "event" | "pause";
  name: string;
  /** Its timeout (epoch ms), or null for none. */
  until: number | null;
  /** invoke: the child job's id. */
  child?: string;
  /** pause: when the job is due once resumed; null while its other waits (or its attempt) go on. */
  dueAt?: number | null;
}

/** An open wait ends: its result, and its bytes counted in the journal's size. */
const WAIT_END = "UPDATE job_step SET result = ?3, finished_at = ?4, bytes = bytes + ?5 WHERE job_seq = ?1 AND seq = ?2 AND finished_at IS NULL";
/** jobResume: waiting → pending, due now — unless it is paused (jobs/job-pause.ts). */
const JOB_RESUME = `
UPDATE job SET state = '${TRANSITIONS.resume.to}', wait = NULL, run_at = ?2, updated_at = ?2
 WHERE seq = ?1 AND state IN (${sqlList(TRANSITIONS.resume.from)}) AND NOT (${PAUSED_SQL})
RETURNING *`;
/** journalFull: whether `result` would take the job's journal past limits.journalMaxBytes. */
export function journalFull(store: HomeStore, jobSeq: number, result: string): boolean {
  return store.sql.exec<{ n: number }>(JOURNAL_BYTES, jobSeq).one().n + plainBytes(result, 0) > store.config.limits.journalMaxBytes;
}

export function endWait(store: HomeStore, jobSeq: number, seq: number, result: string, now: number): void {
  store.sql.exec(WAIT_END, jobSeq, seq, result, now, plainBytes(result, 0));
}

/**
 * resume: a waiting job back to pending, due now, the timeline saying why (null: it was not waiting). A paused one
 * stays waiting, for its resume alone, due now once resumed (jobs/job-pause.ts): the row answered is still waiting.
 */
export function resume(store: HomeStore, jobSeq: number, why: string, now: number): JobRow | null {
  const row = jobRows(store.sql.exec(JOB_RESUME, jobSeq, now))[0] ?? null;
  if (row) note(store, jobSeq, why);
  return row ?? keepPaused(store, jobSeq, now);
}

export function note(store: HomeStore, jobSeq: number, text: string): void {
  noteLastTransition(store.sql, jobSeq, text.slice(0, 500));
}

export const KIND_WORDS = { signal: "signal", token_wait: "wait token", token: "wait token", invoke: "child", event: "event on", pause: "resume of" } as const;

export function describe(kind: WaitItem["kind"], name: string): string {
  return `${KIND_WORDS[kind]} ${JSON.stringify(name)}`;
}
