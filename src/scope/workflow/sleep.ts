/**
 * sleep (ctx.sleep): a durable sleep journaled at its step's position, the job
 * pending until then without spending its attempt (docs/workflows.md "Sleep").
 *
 * @module
 */
import type { JournalStart } from "../../job/handler-contract";
import { applyAttemptEnd } from "../jobs/attempt-end";
import type { HomeStore } from "../jobs/home-store";
import { jobRows, type JobRow } from "../jobs/job-row";
import { JOB_FIND_LEASED, leaseRefusal } from "../jobs/lease";
import type { Outcome } from "../jobs/outcome";
import { idSeq } from "../jobs/read";
import { writeStep } from "./steps";

export interface SleepInput {
  name: string;
  seq: number;
  /** The handler's wake time: kept only when it sends no duration (a replay, whose wake time the journal has). */
  until: number;
  /** How long it sleeps, from now on this object's clock (a handler's clock may be off). */
  durationMs?: number | null;
  startedAt: number;
  start: JournalStart;
  /** The version of the code that ran the attempt (scope/jobs/attempt-end.ts, AttemptEnd `version`). */
  version?: string | null;
}


/**
 * sleep (ctx.sleep): journal the sleep at its position and put the job back to
 * pending until then, without spending the attempt — no call, lease or permit
 * is held while it sleeps. One transaction, fenced by the lease.
 */
export function sleep(store: HomeStore, id: string, token: string, s: SleepInput, now: number): Outcome<{ row: JobRow }> {
  return store.atomic(() => {
    const leased = jobRows(store.sql.exec(JOB_FIND_LEASED, now, id, token, idSeq(id)))[0];
    if (!leased) return leaseRefusal(store, id, token, now);
    const until = s.durationMs === undefined || s.durationMs === null ? s.until : now + s.durationMs;
    const refused = writeStep(store, leased, { seq: s.seq, name: s.name, kind: "sleep", result: null, startedAt: s.startedAt, finishedAt: now, wakeAt: until }, s.start);
    if (refused) {
      // The journal cannot take the sleep (its cap, or another step at its position): every replay would end here
      // again, so the job fails now, saying why, rather than hold its lease until the reap pass retries it.
      const error = refused.reason;
      const kind = refused.code === "nondeterminism" ? "nondeterminism" : "fatal";
      const failed = applyAttemptEnd(store, leased, { to: "failed", failureKind: kind, error, erred: { kind, message: error, frame: null }, version: s.version ?? null }, now);
      if (!failed) return leaseRefusal(store, id, token, now);
      store.touched(now);
      return { ok: true, row: failed };
    }
    const note = `sleep ${JSON.stringify(s.name)} until ${new Date(until).toISOString()}`;
    const row = applyAttemptEnd(store, leased, { to: "pending", runAt: Math.max(until, now), attempts: Math.max(leased.attempts - 1, 0), error: leased.last_error, note, version: s.version ?? null }, now);
    if (!row) return leaseRefusal(store, id, token, now);
    store.touched(now);
    return { ok: true, row };
  });
}
