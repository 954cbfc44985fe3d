/**
 * The core's writes (docs/design.md "One commit path"): each one operation of
 * jobs/ in one transaction, returning its answer and the record of what it
 * changed (changes.ts); the capabilities' writes are in their own folders and
 * the shell's table (writes.ts) joins them. The table test holds each record.
 *
 * @module
 */
import type { FailOutcome } from "../../job/schemas";
import { PERMIT_TTL_FACTOR } from "../../pool/permit-plan";
import type { BulkAction } from "../../job/transitions";
import { changed, nothing, written, type Changes, type ReportUrgency, type Written } from "./changes";
import { cancelAll, cancelJob, cancelKeys, retryFailed, retryJob, type FailedCursor } from "./change";
import { enqueueJobs, type EnqueueOutcome, type NewJob } from "./enqueue";
import { claimKey, claimOrEnqueue, type InlineClaim } from "./inline-claim";
import type { JobRow } from "./job-row";
import { leaseRefusal } from "./lease";
import type { Outcome, Refusal } from "./outcome";
import { getJob, type ListFilter } from "./read";
import { reapOnce } from "./reap-pass";
import { complete, completeMany, fail, heartbeat, release, type CompleteItem, type FailInput } from "./settle";
import type { HomeStore } from "./home-store";
import { expireDue } from "./expiry";
import { actOnPage } from "./bulk";
import { pauseJob, resumeJob, type PauseOutcome } from "./job-pause";

const GIVEN_BACK = "given back by its worker";

/**
 * reportFor: rows that are all push jobs of types no `waitsFor` names may wait for the rest of their burst before
 * the catalog hears of them (catalog-report.ts, `hold`); so may none (a fill ending re-arms and changed nothing).
 */
export function reportFor(store: HomeStore, rows: readonly JobRow[]): ReportUrgency {
  const { pushTypes, waitedOn } = store.config;
  return rows.every((r) => pushTypes.includes(r.type) && !waitedOn.includes(r.type)) ? "hold" : "now";
}

/** enqueued: what an enqueue changed — jobs created (due ones dispatched now, without the enqueue waiting for it). */
export function enqueuedChanges(store: HomeStore, out: Extract<EnqueueOutcome, { ok: true }>): Changes {
  const created = out.results.flatMap((r) => (r.created ? [r.row] : []));
  // Every row the enqueue answered with: a duplicate's debounce or replacement changed its row too.
  const answered = out.results.flatMap((r) => (r.row ? [r.row] : []));
  const report = created.some((row) => store.config.waitedOn.includes(row.type)) ? "urgent" : reportFor(store, answered);
  // A job that went straight to a handler started: its `job:started` is an event, and its lease is held (push.ts).
  const started = created.filter((row) => row.state === "running");
  // Older jobs of a key its newest ended (key-cancel.ts): ended as a cancel's are — an event each, handlers aborted.
  const superseded = out.superseded ?? [];
  const ending = superseded.length > 0 ? { aborted: superseded.map((r) => r.id), permits: { refundLease: null } } : {};
  return changed({ created, quiet: created.filter((row) => row.state !== "running"), events: [...superseded, ...started], fill: true, report, ...ending });
}

/** refused: a holder's write that no longer holds the job is an event (`job:lease_lost`, naming the write). */
export function refused(store: HomeStore, write: string, id: string, out: Refusal): Changes {
  if (out.code !== "lease_lost") return nothing();
  const row = getJob(store.sql, id);
  return row ? { ...nothing(), leaseLost: [{ row, write, reason: out.reason }] } : nothing();
}

/** settled: an attempt's end by its holder (complete, fail, sleep) or a cancel — its permits may be free, its key's follower due. */
export function settled<T extends Outcome<{ row: JobRow }>>(store: HomeStore, write: string, id: string, out: T, aborted: string[] = []): Written<T> {
  if (!out.ok) return written(out, refused(store, write, id, out as Refusal));
  return written(out, changed({ events: [out.row], aborted, permits: { refundLease: null }, fill: true }));
}

export function cancelled(rows: readonly JobRow[], fill: boolean): Changes {
  const permits = { refundLease: null };
  return rows.length > 0 ? changed({ events: rows, aborted: rows.map((r) => r.id), permits, fill }) : { ...nothing(), permits };
}

export const jobWrites = {
  enqueue(store: HomeStore, jobs: readonly NewJob[], now: number): Written<EnqueueOutcome> {
    // Ids the queue made up become ids from the seq: this call's answer is where the caller learns them.
    // Jobs due now may go straight to a handler call, which the push capability starts after the commit.
    const out = enqueueJobs(store, jobs, now, { seqIds: true, straight: true });
    return written(out, out.ok ? enqueuedChanges(store, out) : nothing());
  },

  heartbeat(store: HomeStore, id: string, token: string, leaseMs: number | null, now: number): Written<Outcome<{ leaseExpiresAt: number }>> {
    const out = heartbeat(store, id, token, leaseMs, now);
    if (!out.ok) return written(out, refused(store, "heartbeat", id, out));
    // Only an explicit leaseMs can shorten a lease (and need the alarm earlier); otherwise it only moves later.
    return written(out, { ...nothing(), arm: leaseMs !== null, renew: { id, token, ttlMs: (out.leaseExpiresAt - now) * PERMIT_TTL_FACTOR } });
  },

  complete(store: HomeStore, id: string, token: string, result: string | null, now: number, version: string | null = null): Written<Outcome<{ row: JobRow }>> {
    return settled(store, "complete", id, complete(store, id, token, result, now, version));
  },

  /** completeMany: a pull worker's completions of one moment, in one transaction and one statement (settle.ts). */
  completeMany(store: HomeStore, items: readonly CompleteItem[], now: number): Written<Outcome<{ id: string }>[]> {
    const rows = completeMany(store, items, now);
    const done = new Set(rows.map((r) => r.id));
    const lost: Changes["leaseLost"][number][] = [];
    const answer = items.map((i): Outcome<{ id: string }> => {
      if (done.has(i.id)) return { ok: true, id: i.id };
      const out = leaseRefusal(store, i.id, i.token, now);
      lost.push(...refused(store, "complete", i.id, out).leaseLost);
      return out;
    });
    const base = rows.length > 0 ? changed({ events: rows, permits: { refundLease: null }, fill: true }) : nothing();
    return written(answer, { ...base, leaseLost: lost });
  },

  fail(store: HomeStore, id: string, token: string, input: FailInput, now: number): Written<Outcome<{ row: JobRow; outcome: FailOutcome }>> {
    return settled(store, "fail", id, fail(store, id, token, input, now));
  },

  /** release: the holder gives the job back unrun — its lease's permits go back with their rate spend refunded. */
  release(store: HomeStore, id: string, token: string, now: number): Written<Outcome<{ row: JobRow }>> {
    const out = release(store, id, token, GIVEN_BACK, now);
    if (!out.ok) return written(out, refused(store, "release", id, out));
    return written(out, changed({ released: { rows: [out.row], reason: GIVEN_BACK }, permits: { refundLease: { id, token } }, fill: true }));
  },

  /** cancel: a running job's permits are held until its lease would have ended; its handler's signal aborts. */
  cancel(store: HomeStore, id: string, reason: string | null, now: number, cascade = true): Written<Outcome<{ row: JobRow }>> {
    store.hooks.cancelling(store, { ids: [id] });
    const out = cancelJob(store, id, reason, now, cascade);
    return settled(store, "cancel", id, out, out.ok ? [id] : []);
  },

  /** cancelKeys: the live jobs of `type` under these dedupe keys; a follower behind a cancelled running job is due now. */
  cancelKeys(store: HomeStore, type: string, keys: readonly string[], reason: string | null, now: number): Written<number> {
    store.hooks.cancelling(store, { type, keys });
    const rows = cancelKeys(store, type, keys, reason, now);
    return written(rows.length, cancelled(rows, true));
  },

  cancelAll(store: HomeStore, pendingOnly: boolean, reason: string | null, now: number): Written<number> {
    if (!pendingOnly) store.hooks.cancelling(store, null);
    const rows = cancelAll(store, pendingOnly, reason, now);
    return written(rows.length, cancelled(rows, false));
  },

  /** retry: a failed, cancelled, superseded or expired job pending again — no attempt's end, so no event, but it may be due. */
  retry(store: HomeStore, id: string, now: number): Written<Outcome<{ row: JobRow }>> {
    const out = retryJob(store, id, now);
    return written(out, out.ok ? changed({ quiet: [out.row], fill: true }) : nothing());
  },

  /** pause: a pending job waits, paused (an event: `job:waiting`); a running or waiting one is asked, which changes no count (job-pause.ts). */
  pause(store: HomeStore, id: string, now: number): Written<PauseOutcome> {
    const out = pauseJob(store, id, now);
    return written(out, out.ok && out.moved ? changed({ events: [out.row] }) : nothing());
  },

  /** resume: a paused job pending again at the time it was due (no event, but it may be due), or superseded by a newer job of its key. */
  resume(store: HomeStore, id: string, now: number): Written<Outcome<{ row: JobRow }>> {
    const out = resumeJob(store, id, now);
    if (!out.ok) return written(out, nothing());
    if (out.row.state === "pending") return written(out, changed({ quiet: [out.row], fill: true }));
    return written(out, out.row.finished_at !== null ? changed({ events: [out.row] }) : nothing());
  },

  /**
   * bulk: a page of the jobs a filter matches, cancelled (as `cancelKeys`: permits held, handlers aborted, a
   * follower due) or retried by hand (as `retry`: no event, but due) — bulk.ts.
   */
  bulk(store: HomeStore, action: Exclude<BulkAction, "rerun">, filter: ListFilter, afterSeq: number, limit: number, reason: string | null, now: number): Written<{ changed: number; skipped: number; next: number | null }> {
    const { changed: rows, ...answer } = actOnPage(store, action, filter, afterSeq, limit, reason, now);
    const changes = action === "cancel" ? cancelled(rows, true) : rows.length > 0 ? changed({ quiet: rows, fill: true }) : nothing();
    return written({ changed: rows.length, ...answer }, changes);
  },

  /** retryFailed: a page of failed jobs back to pending, due now; `next` resumes. */
  retryFailed(store: HomeStore, type: string | null, after: FailedCursor | null, now: number, limit?: number): Written<{ retried: number; skipped: number; next: FailedCursor | null }> {
    const { rows, ...answer } = retryFailed(store, type, after, now, limit);
    return written(answer, rows.length > 0 ? changed({ quiet: rows, fill: true }) : nothing());
  },

  /** claimOrEnqueue: enqueue under the key (pending mode) and lease it to the caller when no job of the key runs. */
  claimOrEnqueue(store: HomeStore, job: NewJob, worker: string, leaseMs: number, now: number): Written<InlineClaim> {
    const out = claimOrEnqueue(store, job, worker, leaseMs, now);
    if (!out.ok) return written(out, nothing());
    const created = out.created ? [out.leased ?? out.job] : [];
    return written(out, changed({ created, quiet: out.leased ? [] : created, events: out.leased ? [out.leased] : [] }));
  },

  /** claimKey: lease the key's pending job when none of the key is running (a caller draining its key). */
  claimKey(store: HomeStore, type: string, dedupeKey: string, worker: string, leaseMs: number, now: number): Written<JobRow | null> {
    const row = claimKey(store, type, dedupeKey, worker, leaseMs, now);
    return written(row, row ? changed({ events: [row] }) : nothing());
  },

  /** reap: end the attempts whose lease ran out; `more` when the pass filled its batch. */
  reap(store: HomeStore, now: number): Written<{ more: boolean }> {
    const { rows, more } = reapOnce(store, now);
    // Nothing reaped still sets the alarm anew: a lease the caller expected to lapse may have been renewed.
    return written({ more }, rows.length > 0 ? changed({ events: rows, reaped: rows }) : { ...nothing(), arm: true });
  },

  /** expire: the never-started jobs whose expiry passed end `expired` (expiry.ts); an ordered type's next may be due. */
  expire(store: HomeStore, now: number): Written<{ more: boolean }> {
    const { rows, more } = expireDue(store, now);
    return written({ more }, rows.length > 0 ? changed({ events: rows, fill: true }) : nothing());
  },
};
