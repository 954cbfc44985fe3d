/**
 * The scope object's side of push dispatch (dispatch/scope-port.ts): the
 * dispatcher's claims, settles, renewals and journal writes as transactions
 * over this object's SQLite. The dispatcher gets jobs to send and opaque rows
 * to hand back for events; it never sees the SQL.
 *
 * @module
 */
import { keyedType } from "../../config/limits";
import type { QueueConfig } from "../../config/schema";
import type { DispatchJob, HandlerOutcome, JournalAnswer, JournalWrite } from "../../job/handler-contract";
import type { Leased, ScopePort } from "../../dispatch/scope-port";
import { applyOutcome, resultText } from "./apply-outcome";
import { busyHere, claimJobs, countStartable, dueTypesAmong, isSerial } from "../jobs/claim";
import { gatherUntil } from "../jobs/gathering";
import { countDueOfKey, nextDueKey } from "../jobs/keyed-claim";
import { attemptDeadline, handlerJournal, scopeOfRow, timedOut, type JobRow } from "../jobs/job-row";
import type { Lens } from "../../sealing/lens";
import { eventOfTags } from "../../job/event-tags";
import { completeMany, heartbeat, type CompleteItem } from "../jobs/settle";
import { appendStep, journalsOf, signTokens } from "../workflow/steps";
import { pauseAsked } from "../jobs/job-pause";
import { keepLogs } from "../jobs/job-logs";
import type { WorkflowStore } from "../workflow/workflow-store";
import type { WakeMemo } from "../jobs/wake-memo";
import { PUSH_WORKER } from "../jobs/pushed-leases";
import { heldDueTypes, restartDue } from "./held-restart";
import { attemptTrace, type TraceContext } from "../../job/trace";


/**
 * `pauseFresh`: whether the paused set can be trusted now (scope/jobs/pause-gate.ts); until it can, nothing is due.
 * `memo`: keeps the due types while no write or lapse of time can change them (wake-memo.ts).
 */
export function dispatchPort(store: WorkflowStore, config: QueueConfig, pauseFresh: (now: number) => boolean, memo: WakeMemo): ScopePort<JobRow> {
  // Results sealed before their settle's transaction with native AES-GCM (`prepare`), by outcome; one not here is
  // sealed inside the settle, synchronously (sealing/vault.ts).
  const sealedResults = new WeakMap<HandlerOutcome, string>();
  return {
    dueTypes(now) {
      if (config.pushTypes.length === 0) return [];
      // One statement finds the types with a job due (and not held behind its key); of those, a one-at-a-time type
      // (serializeByScope in a scope's object, ordered) must also pass countStartable.
      const due = memo.due(now, () =>
        dueTypesAmong(store.sql, config.pushTypes, now).filter((t) => !isSerial(store, t) || countStartable(store, t, now, 1) > 0),
      );
      // And the types of retries held here that came due (jobs/held-retries.ts): memory, not the claim index.
      const held = heldDueTypes(store, now).filter((t) => !due.includes(t));
      const all = held.length === 0 ? due : [...due, ...held];
      // Asked only when something would run: an idle object never syncs.
      return all.length > 0 && pauseFresh(now) ? all : [];
    },
    countDue: (type, now, max) => countStartable(store, type, now, max),
    gatherUntil: (type, now) => gatherUntil(store, type, now),
    serial: (type) => isSerial(store, type),
    busyHere: (types, now) => busyHere(store, types, now),

    keyed: (type) => keyedType(config, type),
    nextDueKey: (type, now, after) => nextDueKey(store.sql, type, now, after),
    // A one-at-a-time type (serializeByScope here) starts at most one, of whichever key.
    countDueOfKey: (type, key, now, max) =>
      isSerial(store, type) ? Math.min(countStartable(store, type, now, 1), countDueOfKey(store.sql, type, key, now, 1)) : countDueOfKey(store.sql, type, key, now, max),

    claim(type, limit, leaseMs, now, keys) {
      const left: string[] = [];
      const rows = store.atomic(() => {
        // Retries held here start first, straight (jobs/held-retries.ts); then the claim index's due jobs.
        const restarted = restartDue(store, type, limit, leaseMs, now, left);
        if (restarted.length >= limit) return restarted;
        const claimed = claimJobs(store, { worker: PUSH_WORKER, types: [type], limit: limit - restarted.length, leaseMs, ...(keys ? { keys: new Map([[type, keys]]) } : {}) }, now);
        return restarted.length === 0 ? claimed : [...restarted, ...claimed];
      });
      // Their leases are held here, not in job_lease_idx (pushed-leases.ts); held retries given back are forgotten.
      for (const id of left) store.pushed.held.forget(id);
      store.pushed.note(rows);
      // Each job's journal of durable steps rides with it, so a replayed step answers without a call back (steps.ts).
      const journals = journalsOf(store, rows);
      const leased: Leased[] = rows.map((r) => ({
        id: r.id,
        token: r.lease_token!,
        timeoutAt: attemptDeadline(r),
        key: r.limit_key,
        job: toDispatchJob(r, now, journals.get(r.seq), store.lens),
      }));
      return { leased, changed: rows };
    },

    settle(items, now) {
      const settled = store.atomic(() => {
        // A call's completions in one statement; anything else (a retry, a failure, a result too large) one by one.
        const completions: CompleteItem[] = [];
        const changed: JobRow[] = [];
        // An outcome's lines are kept only where the outcome lands under its lease, as a pull worker's are
        // (docs/handlers.md, Logs kept with the job): a late answer for a reaped or cancelled attempt leaves none.
        for (const { id, token, outcome } of items) {
          const result = outcome.kind === "completed" ? (sealedResults.get(outcome) ?? resultText(config, outcome)) : undefined;
          if (result !== undefined) completions.push({ id, token, result, ...(outcome.logs ? { logs: outcome.logs } : {}), version: outcome.version ?? null });
          else settleOne(store, config, id, token, outcome, now, changed);
        }
        try {
          changed.push(...completeMany(store, completions, now));
        } catch (e) {
          // The leases stay in SQL (and held in memory) and are not renewed: the reap pass recovers the jobs.
          console.error(JSON.stringify({ event: "dispatch:settle_failed", jobs: completions.length, error: String(e) }));
        }
        return changed;
      });
      // After the commit: a rolled-back settle leaves its leases held.
      store.pushed.note(settled);
      return settled;
    },

    renew(id, token, leaseMs, now) {
      const out = heartbeat(store, id, token, leaseMs, now);
      if (out.ok) store.pushed.renewed(id, out.leaseExpiresAt);
      if (out.ok) return { ok: true };
      return { ok: false, reason: out.code === "lease_lost" && (out.reason === "cancelled" || out.reason === "timeout") ? out.reason : "lease_lost" };
    },

    journal(writes, now) {
      // The writes of one moment in one transaction: one commit for a batch whose jobs finish a step together.
      const run = (ws: readonly JournalWrite[]) => store.atomic(() => ws.map((write, i) => journalOne(store, write, writes[i]!.token, now)));
      const asked = writes.map((w) => w.write);
      // A wait token is signed first, and step values sealed natively (sealing/vault.ts), both asynchronous; the
      // writes themselves stay one transaction.
      const sealing = store.lens.vault.on && asked.some((w) => w.op === "commit");
      if (!sealing && !asked.some((w) => w.op === "token")) return run(asked);
      return (async () => run(await sealWrites(store, await signTokens(store, asked, now))))();
    },

    async reveal(job) {
      const { lens } = store;
      if (!lens.vault.on) return job;
      const payloadJson = await lens.openDeep(job.payloadJson, "handler");
      return payloadJson === job.payloadJson && !job.journal ? job : { ...job, payloadJson, ...(job.journal ? { journal: await lens.openDeep(job.journal, "handler") } : {}) };
    },

    async prepare(outcomes) {
      if (!store.lens.vault.on) return;
      await Promise.all(
        outcomes.map(async (o) => {
          if (o.kind !== "completed") return;
          const text = resultText(config, o);
          if (typeof text === "string") sealedResults.set(o, await store.lens.vault.sealTextAsync(text));
        }),
      );
    },
  };
}

/** sealWrites: step values sealed with native AES-GCM before their transaction (writeStep would seal them there, slower). */
async function sealWrites(store: WorkflowStore, writes: readonly JournalWrite[]): Promise<JournalWrite[]> {
  if (!store.lens.vault.on) return [...writes];
  return Promise.all(writes.map(async (w) => (w.op === "commit" && w.result !== null ? { ...w, result: await store.lens.vault.sealTextAsync(w.result) } : w)));
}

/** settleOne: one outcome under its lease; never throws (a failed write leaves the lease to the reap pass). */
function settleOne(store: WorkflowStore, config: QueueConfig, id: string, token: string, outcome: HandlerOutcome, now: number, changed: JobRow[]): void {
  try {
    const out = applyOutcome(store, config, id, token, outcome, now);
    if (!out.ok) return;
    changed.push(out.row);
    if (outcome.logs) keepLogs(store, id, outcome.logs);
  } catch (e) {
    console.error(JSON.stringify({ event: "dispatch:settle_failed", id, error: String(e) }));
  }
}

function journalOne(store: WorkflowStore, w: JournalWrite, token: string, now: number): JournalAnswer {
  try {
    const out = appendStep(store, w, token, now);
    if (out.ok) {
      // Asked to pause (jobs/job-pause.ts): the handler SDK ends the attempt after this step (runtime/steps.ts).
      const paused = pauseAsked(out.row) ? { paused: true as const } : {};
      return out.result === undefined ? { ok: true, ...paused } : { ok: true, result: store.lens.handlerText(out.result), ...paused };
    }
    if (out.code === "lease_lost" || out.code === "already_terminal" || out.code === "not_found") return { ok: false, code: "lease_lost", message: `this attempt no longer holds the job (${out.code})` };
    if (out.code === "conflict" || out.code === "gone") return { ok: false, code: "lease_lost", message: out.reason };
    if (out.code === "refused" || out.code === "invalid") return { ok: false, code: "refused", message: out.reason };
    return { ok: false, code: out.code, message: out.reason };
  } catch (e) {
    // Storage failed: the step did not journal, and the handler must not go on as if it had.
    return { ok: false, code: "lease_lost", message: `the journal write failed: ${String(e)}` };
  }
}

/** toDispatchJob: a leased row as its handler's call carries it; its sealed values are opened just before the call (`reveal`). */
export function toDispatchJob(row: JobRow, now: number, journal: DispatchJob["journal"], lens: Lens): DispatchJob {
  // Only a tagged job can be a delivery: the common untagged one parses nothing.
  const event = row.tags === "[]" ? null : eventOfTags(JSON.parse(row.tags) as string[]);
  return {
    dispatchedAt: now,
    ...(journal ? { journal: handlerJournal(journal, lens) } : {}),
    ...(event ? { event } : {}),
    ...(row.limit_key !== null ? { limitKey: row.limit_key } : {}),
    // The handler's spans continue its attempt's (job/trace.ts).
    ...(row.trace !== null ? { trace: attemptTrace(row.id, row.attempts, JSON.parse(row.trace) as TraceContext) } : {}),
    ...(lens.sensitive(row.type) ? { sensitive: true as const } : {}),
    id: row.id,
    type: row.type,
    payloadJson: lens.handlerText(row.payload),
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    scope: scopeOfRow(row),
    runAt: row.run_at,
    scheduledFor: row.scheduled_for,
  };
}

/** reapedFlights: what the dispatcher needs of rows the reap pass ended — which, and whether the timeout did it. */
export function reapedFlights(rows: readonly JobRow[], now: number): { id: string; timedOut: boolean }[] {
  return rows.map((r) => ({ id: r.id, timedOut: timedOut(r, now) }));
}
