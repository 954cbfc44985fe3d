/**
 * The scope object's writes, each returning its answer and the record of what
 * it changed (changes.ts). Each is one operation of this folder (one
 * transaction) and a statement of what follows from it; `ScopeDO` runs the
 * write and hands the record to `FollowUps.run`, and does nothing else
 * (docs/design.md "One commit path"). The table test holds each record.
 *
 * @module
 */
import type { TerminalState } from "../job/states";
import type { FailOutcome } from "../job/schemas";
import type { JournalWrite } from "../job/handler-contract";
import { PERMIT_TTL_FACTOR } from "../pool/permit-plan";
import { changed, nothing, written, type Changes, type Written } from "./jobs/changes";
import { cancelAll, cancelJob, cancelKeys, retryFailed, retryJob, type FailedCursor } from "./jobs/change";
import type { ReportUrgency } from "./report/catalog-report";
import { enqueueJobs, type EnqueueOutcome, type NewJob } from "./jobs/enqueue";
import { claimKey, claimOrEnqueue, type InlineClaim } from "./jobs/inline-claim";
import type { JobRow } from "./jobs/job-row";
import { leaseRefusal } from "./jobs/lease";
import { ORPHAN_REASON, releaseOrphans } from "./push/orphans";
import type { Outcome, Refusal } from "./jobs/outcome";
import { holdPermits, holdPermitsOfKeys } from "./pull/pull-permits";
import { getJob } from "./jobs/read";
import { reapOnce } from "./jobs/reap-pass";
import { complete, completeMany, fail, heartbeat, release, sleep, type CompleteItem, type FailInput, type SleepInput } from "./jobs/settle";
import { appendStep, resolveStep } from "./workflow/steps";
import { setProgress, type ProgressItem } from "./watching/progress";
import { appendLeasedLogs, type WorkerLogItem } from "./jobs/job-logs";
import type { HomeStore } from "./jobs/home-store";
import { prune, sweepOnce } from "./retention/sweep-pass";
import { expireDue } from "./jobs/expiry";
import type { BulkAction } from "../job/transitions";
import { actOnPage } from "./jobs/bulk";
import type { ListFilter } from "./jobs/read";
import { endEventWait, endTimedOut, wait, type WaitInput } from "./workflow/waits";
import { completeToken, signal, signalKey, type SignalOutcome } from "./workflow/signals";
import { resume, type SignalKind } from "./workflow/wait-entries";
import { endInvokes, enqueueOwed, type ChildEnd, type OwedJob } from "./workflow/invokes";
import { eventArrived, publish, registerWait, unwait, type ArrivedEvent, type EventWait } from "./workflow/event-waits";

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
  return changed({ created, quiet: created, fill: true, report });
}

/** refused: a holder's write that no longer holds the job is an event (`job:lease_lost`, naming the write). */
function refused(store: HomeStore, write: string, id: string, out: Refusal): Changes {
  if (out.code !== "lease_lost") return nothing();
  const row = getJob(store.sql, id);
  return row ? { ...nothing(), leaseLost: [{ row, write, reason: out.reason }] } : nothing();
}

/** settled: an attempt's end by its holder (complete, fail, sleep) or a cancel — its permits may be free, its key's follower due. */
function settled<T extends Outcome<{ row: JobRow }>>(store: HomeStore, write: string, id: string, out: T, aborted: string[] = []): Written<T> {
  if (!out.ok) return written(out, refused(store, write, id, out as Refusal));
  return written(out, changed({ events: [out.row], aborted, permits: { refundLease: null }, fill: true }));
}

export const writes = {
  enqueue(store: HomeStore, jobs: readonly NewJob[], now: number): Written<EnqueueOutcome> {
    // Ids the queue made up become ids from the seq: this call's answer is where the caller learns them.
    const out = enqueueJobs(store, jobs, now, { seqIds: true });
    return written(out, out.ok ? enqueuedChanges(store, out) : nothing());
  },

  heartbeat(store: HomeStore, id: string, token: string, leaseMs: number | null, now: number): Written<Outcome<{ leaseExpiresAt: number }>> {
    const out = heartbeat(store, id, token, leaseMs, now);
    if (!out.ok) return written(out, refused(store, "heartbeat", id, out));
    // Only an explicit leaseMs can shorten a lease (and need the alarm earlier); otherwise it only moves later.
    return written(out, { ...nothing(), arm: leaseMs !== null, renew: { id, token, ttlMs: (out.leaseExpiresAt - now) * PERMIT_TTL_FACTOR } });
  },

  complete(store: HomeStore, id: string, token: string, result: string | null, now: number): Written<Outcome<{ row: JobRow }>> {
    return settled(store, "complete", id, complete(store, id, token, result, now));
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

  /** sleep: a pull worker's ctx.sleep — journaled, and the job pending until then, unspent. */
  sleep(store: HomeStore, id: string, token: string, input: SleepInput, now: number): Written<Outcome<{ row: JobRow }>> {
    return settled(store, "sleep", id, sleep(store, id, token, input, now));
  },

  /** wait: a pull worker's ctx.waitFor… — journaled, and the job waiting (or due again at once), unspent. */
  wait(store: HomeStore, id: string, token: string, input: WaitInput, now: number): Written<Outcome<{ row: JobRow }>> {
    return settled(store, "wait", id, wait(store, id, token, input, now));
  },

  /** enqueueOwed: children or a failure handler another object owes this one; `retry` when this home is full. */
  enqueueOwed(store: HomeStore, jobs: readonly OwedJob[], now: number, home: string): Written<{ retry: boolean }> {
    const { out, retry } = enqueueOwed(store, jobs, now, home);
    return written({ retry }, out.ok ? enqueuedChanges(store, out) : nothing());
  },

  /** eventWait / eventUnwait / publish (a topic's registry object): waits registered and dropped, an event matched (event-waits.ts). */
  eventWait(store: HomeStore, wait: EventWait, now: number): Written<boolean> {
    registerWait(store, wait, now);
    return written(true, nothing());
  },

  eventUnwait(store: HomeStore, jobId: string, seq: number): Written<boolean> {
    unwait(store, jobId, seq);
    return written(true, nothing());
  },

  publish(store: HomeStore, topic: string, eventId: string, payload: string, now: number): Written<number> {
    return written(publish(store, topic, eventId, payload, now), nothing());
  },

  /** eventArrived: an event for a job's open event wait ends it; a waiting job is due now. */
  eventArrived(store: HomeStore, jobId: string, seq: number, event: ArrivedEvent, now: number): Written<boolean> {
    const row = eventArrived(store, jobId, seq, event, (job, at, result) => endEventWait(store, job, at, result, now));
    return written(true, row ? changed({ quiet: [row], fill: true, report: reportFor(store, [row]) }) : nothing());
  },

  /** childrenEnded: children's ends end their parents' invoke entries; a parent with nothing left open is due now. */
  childrenEnded(store: HomeStore, ends: readonly { parentId: string; end: ChildEnd }[], now: number): Written<boolean> {
    const rows = endInvokes(store, ends, now, (seq, why) => resume(store, seq, why, now));
    return written(true, rows.length > 0 ? changed({ quiet: rows, fill: true, report: reportFor(store, rows) }) : nothing());
  },

  /** signal: a signal or a token's completion for a job; one that ends its wait makes it due (no event: it runs next). */
  signal(store: HomeStore, id: string, kind: SignalKind, name: string, data: string, now: number): Written<SignalOutcome> {
    return signalled(store, signal(store, id, kind, name, data, now));
  },

  /** signalKey: a signal for the live job of `type` that holds the key here (waits.ts). */
  signalKey(store: HomeStore, type: string, dedupeKey: string, name: string, data: string, now: number): Written<SignalOutcome> {
    return signalled(store, signalKey(store, type, dedupeKey, name, data, now));
  },

  /** completeToken: a wait token's completion, the token checked against the journal of the job it names (waits.ts). */
  completeToken(store: HomeStore, token: string, data: string, now: number): Written<SignalOutcome> {
    return signalled(store, completeToken(store, token, data, now));
  },

  /** waitTimeouts: the waits whose timeout passed end (null) and their jobs are due; `more` when the pass filled its batch. */
  waitTimeouts(store: HomeStore, now: number): Written<{ more: boolean }> {
    const { rows, more } = endTimedOut(store, now);
    return written({ more }, rows.length > 0 ? changed({ quiet: rows, fill: true }) : nothing());
  },

  /** expire: the never-started jobs whose expiry passed end `expired` (expiry.ts); an ordered type's next may be due. */
  expire(store: HomeStore, now: number): Written<{ more: boolean }> {
    const { rows, more } = expireDue(store, now);
    return written({ more }, rows.length > 0 ? changed({ events: rows, fill: true }) : nothing());
  },

  /** release: the holder gives the job back unrun — its lease's permits go back with their rate spend refunded. */
  release(store: HomeStore, id: string, token: string, now: number): Written<Outcome<{ row: JobRow }>> {
    const out = release(store, id, token, GIVEN_BACK, now);
    if (!out.ok) return written(out, refused(store, "release", id, out));
    return written(out, changed({ released: { rows: [out.row], reason: GIVEN_BACK }, permits: { refundLease: { id, token } }, fill: true }));
  },

  /** appendStep: a pull worker's journal write, fenced by its lease; a step changes nothing anyone else counts. */
  appendStep(store: HomeStore, write: JournalWrite, token: string, now: number): Written<Outcome<{ row: JobRow; result?: string }>> {
    const out = appendStep(store, write, token, now);
    return written(out, out.ok ? nothing() : refused(store, "step", write.id, out));
  },

  /** progress: holders' reports kept under their leases (progress.ts); a report changes nothing anyone counts. */
  progress(store: HomeStore, items: readonly ProgressItem[], now: number): Written<({ ok: true; at: number } | Refusal)[]> {
    const { answers, rows } = setProgress(store, items, now);
    const lost = items.length === 1 && !answers[0]!.ok ? refused(store, "progress", items[0]!.id, answers[0] as Refusal) : nothing();
    return written(answers, rows.length > 0 ? { ...nothing(), progressed: rows } : lost);
  },

  /** appendLogs: a pull worker's lines under its lease (job-logs.ts); they change nothing anyone counts but its watchers. */
  appendLogs(store: HomeStore, id: string, token: string, items: readonly WorkerLogItem[], now: number): Written<Outcome<{ stored: number }>> {
    return written(appendLeasedLogs(store, id, token, items, now), nothing());
  },

  /** resolveStep: a failed or cancelled job goes back to pending (retried by hand: no event, but due). */
  resolveStep(store: HomeStore, id: string, name: string, resultJson: string, now: number): Written<Outcome<{ row: JobRow }>> {
    const out = resolveStep(store, id, name, resultJson, now, (job) => retryJob(store, job.id, now));
    return written(out, out.ok ? changed({ quiet: [out.row], fill: true }) : nothing());
  },

  /** cancel: a running job's permits are held until its lease would have ended; its handler's signal aborts. */
  cancel(store: HomeStore, id: string, reason: string | null, now: number, cascade = true): Written<Outcome<{ row: JobRow }>> {
    holdPermits(store.sql, id);
    const out = cancelJob(store, id, reason, now, cascade);
    return settled(store, "cancel", id, out, out.ok ? [id] : []);
  },

  /** cancelKeys: the live jobs of `type` under these dedupe keys; a follower behind a cancelled running job is due now. */
  cancelKeys(store: HomeStore, type: string, keys: readonly string[], reason: string | null, now: number): Written<number> {
    holdPermitsOfKeys(store.sql, type, keys);
    const rows = cancelKeys(store, type, keys, reason, now);
    return written(rows.length, cancelled(rows, true));
  },

  cancelAll(store: HomeStore, pendingOnly: boolean, reason: string | null, now: number): Written<number> {
    if (!pendingOnly) holdPermits(store.sql, null);
    const rows = cancelAll(store, pendingOnly, reason, now);
    return written(rows.length, cancelled(rows, false));
  },

  /** retry: a failed, cancelled, superseded or expired job pending again — no attempt's end, so no event, but it may be due. */
  retry(store: HomeStore, id: string, now: number): Written<Outcome<{ row: JobRow }>> {
    const out = retryJob(store, id, now);
    return written(out, out.ok ? changed({ quiet: [out.row], fill: true }) : nothing());
  },

  /**
   * bulk: a page of the jobs a filter matches, cancelled (as `cancelKeys`: permits held, handlers aborted, a
   * follower due) or retried by hand (as `retry`: no event, but due) — bulk.ts.
   */
  bulk(store: HomeStore, action: BulkAction, filter: ListFilter, afterSeq: number, limit: number, reason: string | null, now: number): Written<{ changed: number; skipped: number; next: number | null }> {
    const { changed: rows, ...answer } = actOnPage(store, action, filter, afterSeq, limit, reason, now);
    const changes = action === "cancel" ? cancelled(rows, true) : rows.length > 0 ? changed({ quiet: rows, fill: true }) : nothing();
    return written({ changed: rows.length, ...answer }, changes);
  },

  /** retryFailed: a page of failed jobs back to pending, due now; `next` resumes. */
  retryFailed(store: HomeStore, type: string | null, after: FailedCursor | null, now: number, limit?: number): Written<{ retried: number; skipped: number; next: FailedCursor | null }> {
    const { rows, ...answer } = retryFailed(store, type, after, now, limit);
    return written(answer, rows.length > 0 ? changed({ quiet: rows, fill: true }) : nothing());
  },

  prune(store: HomeStore, olderThan: number, states: readonly TerminalState[], now: number): Written<number> {
    const n = prune(store, olderThan, states, now);
    // Retention may have taken rows whose permits were still held for a cancel.
    return written(n, n > 0 ? changed({ permits: { refundLease: null } }) : { ...nothing(), permits: { refundLease: null } });
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

  /** sweep: the retention pass — terminal jobs past their retention deleted (a cancelled one may still hold permits). */
  sweep(store: HomeStore, now: number): Written<{ more: boolean }> {
    const { deleted, more } = sweepOnce(store, now);
    return written({ more }, deleted > 0 ? changed({ permits: { refundLease: null } }) : nothing());
  },

  /** orphans: a new instance gives back the pushed attempts of the one before, unspent (orphans.ts). */
  orphans(store: HomeStore, now: number): Written<{ n: number; rows: JobRow[] }> {
    const { released, counted } = releaseOrphans(store, now);
    // Their events only: the instance's alarm, set for now, dispatches them and tells the catalog.
    const n = released.length + counted.length;
    return written({ n, rows: [...released, ...counted] }, n > 0 ? { ...nothing(), events: counted, released: { rows: released, reason: ORPHAN_REASON } } : nothing());
  },
};

/** signalled: a signal that ended a wait made its job due; one kept changed nothing anyone counts. */
function signalled(store: HomeStore, out: SignalOutcome): Written<SignalOutcome> {
  return written(out, out.ok && out.resumed ? changed({ quiet: [out.row], fill: true, report: reportFor(store, [out.row]) }) : nothing());
}

function cancelled(rows: readonly JobRow[], fill: boolean): Changes {
  const permits = { refundLease: null };
  return rows.length > 0 ? changed({ events: rows, aborted: rows.map((r) => r.id), permits, fill }) : { ...nothing(), permits };
}
