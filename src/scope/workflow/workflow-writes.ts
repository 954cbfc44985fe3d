/**
 * The workflow capability's writes: durable sleeps and waits, signals and
 * wait tokens, events' waits and arrivals, child jobs' ends, journal writes,
 * each returning its answer and its record (jobs/changes.ts); the shell's
 * table (writes.ts) joins them with the core's.
 *
 * @module
 */
import type { JournalWrite } from "../../job/handler-contract";
import { changed, nothing, written, type Written } from "../jobs/changes";
import { retryJob } from "../jobs/change";
import type { JobRow } from "../jobs/job-row";
import type { Outcome } from "../jobs/outcome";
import { enqueuedChanges, refused, reportFor, settled } from "../jobs/job-writes";
import { appendStep, resolveStep } from "./steps";
import { sleep, type SleepInput } from "./sleep";
import { endEventWait, endTimedOut, wait, type WaitInput } from "./waits";
import { completeToken, signal, signalKey, type SignalOutcome } from "./signals";
import { resume, type SignalKind } from "./wait-entries";
import { endInvokes, enqueueOwed, type ChildEnd, type OwedJob } from "./invokes";
import { eventArrived, publish, registerWait, unwait, type ArrivedEvent, type EventWait } from "./event-waits";
import type { WorkflowStore } from "./workflow-store";
import { rerunJob, rerunPage, type RerunInput } from "./rerun";
import type { ListFilter } from "../jobs/read";

export const workflowWrites = {
  /** rerun: a new job from a finished one, from a step of its journal or its start (rerun.ts) — pending and due now. */
  rerun(store: WorkflowStore, id: string, input: RerunInput, now: number): Written<Outcome<{ row: JobRow; of: JobRow }>> {
    const out = rerunJob(store, id, input, now);
    return written(out, out.ok ? enqueuedChanges(store, { ok: true, results: [{ row: out.row, created: true }] }) : nothing());
  },

  /** rerunPage: a bulk rerun's page of this object's finished jobs (rerun.ts); `changed` counts the reruns made. */
  rerunPage(store: WorkflowStore, filter: ListFilter, afterSeq: number, limit: number, fromStep: string | null, now: number): Written<{ changed: number; skipped: number; next: number | null }> {
    const { made, skipped, next } = rerunPage(store, filter, afterSeq, limit, fromStep, now);
    const changes = made.length > 0 ? enqueuedChanges(store, { ok: true, results: made.map((row) => ({ row, created: true })) }) : nothing();
    return written({ changed: made.length, skipped, next }, changes);
  },

  /** sleep: a pull worker's ctx.sleep — journaled, and the job pending until then, unspent. */
  sleep(store: WorkflowStore, id: string, token: string, input: SleepInput, now: number): Written<Outcome<{ row: JobRow }>> {
    return settled(store, "sleep", id, sleep(store, id, token, input, now));
  },

  /** wait: a pull worker's ctx.waitFor… — journaled, and the job waiting (or due again at once), unspent. */
  wait(store: WorkflowStore, id: string, token: string, input: WaitInput, now: number): Written<Outcome<{ row: JobRow }>> {
    return settled(store, "wait", id, wait(store, id, token, input, now));
  },

  /** enqueueOwed: children or a failure handler another object owes this one; `retry` when this home is full. */
  enqueueOwed(store: WorkflowStore, jobs: readonly OwedJob[], now: number, home: string): Written<{ retry: boolean }> {
    const { out, retry } = enqueueOwed(store, jobs, now, home);
    return written({ retry }, out.ok ? enqueuedChanges(store, out) : nothing());
  },

  /** eventWait / eventUnwait / publish (a topic's registry object): waits registered and dropped, an event matched (event-waits.ts). */
  eventWait(store: WorkflowStore, wait: EventWait, now: number): Written<boolean> {
    registerWait(store, wait, now);
    return written(true, nothing());
  },

  eventUnwait(store: WorkflowStore, jobId: string, seq: number): Written<boolean> {
    unwait(store, jobId, seq);
    return written(true, nothing());
  },

  publish(store: WorkflowStore, topic: string, eventId: string, payload: string, now: number): Written<number> {
    return written(publish(store, topic, eventId, payload, now), nothing());
  },

  /** eventArrived: an event for a job's open event wait ends it; a waiting job is due now. */
  eventArrived(store: WorkflowStore, jobId: string, seq: number, event: ArrivedEvent, now: number): Written<boolean> {
    const row = eventArrived(store, jobId, seq, event, (job, at, result) => endEventWait(store, job, at, result, now));
    return written(true, row ? changed({ quiet: [row], fill: true, report: reportFor(store, [row]) }) : nothing());
  },

  /** childrenEnded: children's ends end their parents' invoke entries; a parent with nothing left open is due now. */
  childrenEnded(store: WorkflowStore, ends: readonly { parentId: string; end: ChildEnd }[], now: number): Written<boolean> {
    const rows = endInvokes(store, ends, now, (seq, why) => resume(store, seq, why, now));
    return written(true, rows.length > 0 ? changed({ quiet: rows, fill: true, report: reportFor(store, rows) }) : nothing());
  },

  /** signal: a signal or a token's completion for a job; one that ends its wait makes it due (no event: it runs next). */
  signal(store: WorkflowStore, id: string, kind: SignalKind, name: string, data: string, now: number): Written<SignalOutcome> {
    return signalled(store, signal(store, id, kind, name, data, now));
  },

  /** signalKey: a signal for the live job of `type` that holds the key here (waits.ts). */
  signalKey(store: WorkflowStore, type: string, dedupeKey: string, name: string, data: string, now: number): Written<SignalOutcome> {
    return signalled(store, signalKey(store, type, dedupeKey, name, data, now));
  },

  /** completeToken: a wait token's completion, the token checked against the journal of the job it names (waits.ts). */
  completeToken(store: WorkflowStore, token: string, data: string, now: number): Written<SignalOutcome> {
    return signalled(store, completeToken(store, token, data, now));
  },

  /** waitTimeouts: the waits whose timeout passed end (null) and their jobs are due; `more` when the pass filled its batch. */
  waitTimeouts(store: WorkflowStore, now: number): Written<{ more: boolean }> {
    const { rows, more } = endTimedOut(store, now);
    return written({ more }, rows.length > 0 ? changed({ quiet: rows, fill: true }) : nothing());
  },

  /** appendStep: a pull worker's journal write, fenced by its lease; a step changes nothing anyone else counts. */
  appendStep(store: WorkflowStore, write: JournalWrite, token: string, now: number): Written<Outcome<{ row: JobRow; result?: string }>> {
    const out = appendStep(store, write, token, now);
    return written(out, out.ok ? nothing() : refused(store, "step", write.id, out));
  },

  /** resolveStep: a failed or cancelled job goes back to pending (retried by hand: no event, but due). */
  resolveStep(store: WorkflowStore, id: string, name: string, resultJson: string, now: number): Written<Outcome<{ row: JobRow }>> {
    const out = resolveStep(store, id, name, resultJson, now, (job) => retryJob(store, job.id, now));
    return written(out, out.ok ? changed({ quiet: [out.row], fill: true }) : nothing());
  },
};

/** signalled: a signal that ended a wait made its job due; one kept changed nothing anyone counts. */
function signalled(store: WorkflowStore, out: SignalOutcome): Written<SignalOutcome> {
  return written(out, out.ok && out.resumed ? changed({ quiet: [out.row], fill: true, report: reportFor(store, [out.row]) }) : nothing());
}
