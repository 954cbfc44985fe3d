/**
 * Waits (docs/workflows.md): a running attempt that ends on `ctx.waitForSignal`, `ctx.waitForToken`,
 * `ctx.waitForEvent` or `ctx.invoke` puts its job in the state `waiting` — no lease, call, permit or attempt held —
 * with each wait journaled at its position (an open row of `job_step`: result null until it ends). What ends a wait
 * (a signal: signals.ts; a child's end: invokes.ts; an event: event-waits.ts) puts the job back to pending, due
 * now, so it runs again and replays to the wait, which now answers. A signal that arrived first is taken here. A
 * wait's timeout is the job's `run_at` while it waits (job_wait_idx); the alarm ends the waits whose timeout passed
 * (`endTimedOut`), answering null.
 *
 * @module
 */
import { crossingOf } from "../../residency";
import { homeOfJobId } from "../../job/home";
import { registryHome } from "../../job/event-tags";
import type { JournalStart, WaitItem } from "../../job/handler-contract";
import { sqlList } from "../../job/states";
import { TRANSITIONS } from "../../job/transitions";
import { applyAttemptEnd } from "../jobs/attempt-end";
import { PAUSE_VIEW, pauseAsked } from "../jobs/job-pause";
import type { HomeStore } from "../jobs/home-store";
import { jobRows, type JobRow } from "../jobs/job-row";
import { JOB_FIND_LEASED, leaseRefusal } from "../jobs/lease";
import type { Outcome } from "../jobs/outcome";
import { idSeq } from "../jobs/read";
import { writeOpenSteps, writeStep, type JournalSize, type OpenStep, type StepAt } from "./steps";
import { ENTRIES_AT } from "./journal-row";
import { journalInvoke, oweChildren, type OwedJob } from "./invokes";
import type { RequestShapes } from "./invoke-request";
import { oweRegistration } from "./event-waits";
import { takeKept } from "./signals";
import { describe, endWait, journalFull, KIND_WORDS, note, resume, SIGNAL_KIND, WAIT_FOREVER, type WaitView } from "./wait-entries";

/** The open waits whose timeout passed end with null. */
const WAITS_TIME_OUT = "UPDATE job_step SET result = 'null', finished_at = ?2 WHERE job_seq = ?1 AND kind IN ('signal', 'token_wait', 'event') AND finished_at IS NULL AND wake_at <= ?2 RETURNING name";

/** jobWaitIfLeased: running → waiting, the attempt given back, its lease gone; run_at is the earliest timeout. */
const JOB_WAIT_IF_LEASED = `
UPDATE job
   SET state = '${TRANSITIONS.wait.to}', wait = ?3, run_at = ?4, attempts = max(attempts - 1, 0), updated_at = ?5,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, code_version = ?6, pause_asked = NULL
 WHERE seq = ?1 AND state IN (${sqlList(TRANSITIONS.wait.from)}) AND lease_token = ?2
RETURNING *`;
/** jobWaitsTimedOut: job_wait_idx. */
const JOB_WAITS_TIMED_OUT = "SELECT * FROM job WHERE state = 'waiting' AND run_at <= ? ORDER BY run_at LIMIT ?";

export interface WaitInput {
  waits: WaitItem[];
  start: JournalStart;
  /** The version of the code that ran the attempt (scope/jobs/attempt-end.ts, AttemptEnd `version`). */
  version?: string | null;
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
    const version = input.version ?? null;
    const failWith = (error: string, nondeterminism = false): Outcome<{ row: JobRow }> => {
      const kind = nondeterminism ? "nondeterminism" : "fatal";
      const failed = applyAttemptEnd(store, leased, { to: "failed", failureKind: kind, error, erred: { kind, message: error, frame: null }, version }, now);
      if (!failed) return leaseRefusal(store, id, token, now);
      store.touched(now);
      return { ok: true, row: failed };
    };
    const open: WaitView[] = [];
    const children: { home: string; job: OwedJob }[] = [];
    // Kept by each journal write of this wait: a fan-out's invokes read the journal's size once (steps.ts).
    const size: JournalSize = { n: null };
    const fresh: OpenStep[] = [];
    const shapes: RequestShapes = new Map();
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
        const child = journalInvoke(store, leased, w, now, at ?? null, shapes);
        if ("refused" in child) return failWith(child.refused, child.nondeterminism === true);
        children.push(child);
        fresh.push(child.step);
        open.push({ kind: "invoke", name: w.name, until: null, child: child.job.id });
        continue;
      } else {
        // An event wait's match goes to its topic's registry, and the event comes back: one jurisdiction (src/residency.ts).
        const crossing = w.kind === "event" && !held.has(w.seq) ? crossingOf(store.config, homeOfJobId(leased.id)?.name ?? "", registryHome(w.name)) : null;
        if (crossing) return failWith(`ctx.waitForEvent(${JSON.stringify(w.name)}): ${crossing}`);
        until = w.until ?? (w.timeoutMs === undefined || w.timeoutMs === null ? null : now + w.timeoutMs);
        // An event wait keeps its match (in ref), so a retry by hand can register it again (event-waits.ts).
        const ref = w.kind === "event" ? JSON.stringify(w.match ?? {}) : null;
        const refused = writeStep(store, leased, { seq: w.seq, name: w.name, kind: w.kind, result: null, startedAt: w.startedAt, finishedAt: null, wakeAt: until, ref }, input.start, size, at ?? null);
        // Its cap, or another step at its position.
        if (refused) return failWith(refused.reason, refused.code === "nondeterminism");
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
    if (refused) return failWith(refused.reason, refused.code === "nondeterminism");
    if (input.waits.some((w) => w.kind === "invoke")) oweChildren(store, leased, children, now);
    if (ended !== null || open.length === 0) {
      // Nothing left to wait for: back to pending, due now and unspent, as a zero sleep would.
      const note = ended ?? "no wait left open";
      const row = applyAttemptEnd(store, leased, { to: "pending", runAt: now, attempts: Math.max(leased.attempts - 1, 0), error: leased.last_error, note, version }, now);
      if (!row) return leaseRefusal(store, id, token, now);
      store.touched(now);
      return { ok: true, row };
    }
    const runAt = Math.min(...open.map((w) => w.until ?? WAIT_FOREVER));
    // A job asked to pause waits paused as well: when its waits end it stays waiting, for its resume (jobs/job-pause.ts).
    const waits = pauseAsked(leased) ? [...open, PAUSE_VIEW] : open;
    const row = jobRows(store.sql.exec(JOB_WAIT_IF_LEASED, leased.seq, token, JSON.stringify(waits), runAt, now, version))[0];
    if (!row) return leaseRefusal(store, id, token, now);
    note(store, row.seq, `waiting for ${describeOpen(open)}`);
    store.touched(now);
    return { ok: true, row };
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
