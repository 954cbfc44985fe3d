/**
 * A scope object's alarm: the reap and sweep loop, the timer for delayed and
 * retried push jobs, for waits' timeouts and for expiries, the sender of what the outbox still owes, the settling of stale batch parts, and the catalog's
 * safety net (docs/design.md "Time and the alarm"). It never throws while storage can
 * still take an alarm: a failed pass is logged, kept in `meta`, and retried
 * ALARM_RETRY_MS later.
 *
 * @module
 */
import type { AlarmArm } from "../alarm-arm";
import type { BatchPart } from "./batches/batch-part";
import type { CatalogReporter } from "./report/catalog-report";
import type { Changes } from "./jobs/changes";
import type { LeasePermits } from "./pull/lease-permits";
import { pruneMetrics } from "./report/minute-counters";
import type { HomeStore } from "./jobs/home-store";
import { cameDueSince } from "./wake";
import { writes } from "./writes";

/** Inside alarm(), never re-arm for "now": a pass that filled its batch comes back this soon. */
export const ALARM_AGAIN_MS = 20;
/** After a failed alarm pass, try again this much later. */
export const ALARM_RETRY_MS = 5_000;

export interface AlarmDeps {
  store: HomeStore;
  alarmArm: AlarmArm;
  reporter: CatalogReporter;
  batches: BatchPart;
  permits: LeasePermits;
  /** This object's name, or null for an empty object older than name keeping, woken cold. */
  home(): string | null;
  /** Runs what follows a write (follow-ups.ts). */
  followUp(changes: Changes, now: number): Promise<void>;
  /** Tell the claims parked for these pulled types. */
  wake(types: Iterable<string>, now: number): void;
  /** The dispatcher looks for due push work (awaited here: the alarm is its timer). */
  fill(): Promise<void>;
  /** The next wake-up this object needs, or null. */
  wakeAt(now: number): number | null;
  /** Send what this object owes others whose time came (outbox.ts). */
  sendOwed(): Promise<void>;
}

export async function alarmPass(d: AlarmDeps, now: number, info?: AlarmInvocationInfo): Promise<void> {
  d.alarmArm.consumed();
  let again = false;
  let failed = false;
  let cameDue: string[] | null = null;
  try {
    cameDue = cameDueSince(d.store, d.reporter.lastSent(), now);
    // Reaped attempts are a write like any other; the catalog and the alarm are this pass's own to do below.
    const reaped = writes.reap(d.store, now);
    await d.followUp({ ...reaped.changes, report: null, arm: false }, now);
    // Waits whose timeout passed end (null): their jobs are due again (waits.ts).
    const timedOut = writes.waitTimeouts(d.store, now);
    await d.followUp({ ...timedOut.changes, report: null, arm: false }, now);
    // Jobs never started whose expiry passed end expired (expiry.ts).
    const expired = writes.expire(d.store, now);
    await d.followUp({ ...expired.changes, report: null, arm: false }, now);
    // Pulled jobs whose delay or backoff ended: parked claims may take them.
    d.wake(cameDue.filter((t) => !d.store.config.pushTypes.includes(t)), now);
    // Its permit pass is this pass's own, below, once for everything the alarm ended.
    const swept = writes.sweep(d.store, now);
    await d.followUp({ ...swept.changes, permits: null, report: null, arm: false }, now);
    // Batches staged here whose commit never came: their decider says what they became (batch-stage.ts).
    await d.batches.settleStale(now);
    // Reaped attempts' permits, and any a crashed instance left after a settle (pull-permits.ts).
    await d.permits.returnFree(null);
    pruneMetrics(d.store.sql, now, d.reporter.unreportedSince());
    again = reaped.answer.more || swept.answer.more || timedOut.answer.more || expired.answer.more;
    // Owed items whose first send did not land (a crash, an unreachable receiver), and those this pass owed.
    await d.sendOwed();
    await d.fill();
  } catch (e) {
    failed = true;
    recordAlarmError(d, now, e, info);
  }
  try {
    if (d.home() === null) {
      // An empty object older than name keeping, woken cold: nothing to tell and no name to tell it under.
      // Drop the mark rather than retry forever; its next named call keeps the name and reports again.
      d.reporter.forget();
    } else {
      // A pulled or awaited job that only came due changes no row, yet claims and waiters read the catalog: it forces
      // a report, and so does a fresh instance (nothing sent yet). Anything else keeps the reporter's cadence — a
      // pushed retry's wake-up is not a summary of its own (catalog-report.ts); the re-arm below brings the deadline.
      const { pushTypes, waitedOn } = d.store.config;
      const told = cameDue === null || cameDue.some((t) => !pushTypes.includes(t) || waitedOn.includes(t));
      const due = d.reporter.deadline();
      if (d.reporter.lastSent() === null || told) await d.reporter.flush(true);
      else if (due !== null && due <= now) await d.reporter.flush();
    }
  } catch (e) {
    // Not this object's failure: the reporter's own deadline (with its retry delay) brings the alarm back.
    console.error(JSON.stringify({ event: "alarm:report_failed", home: d.home(), error: String(e) }));
  }
  let at: number | null = null;
  try {
    at = d.wakeAt(now);
  } catch (e) {
    failed = true;
    recordAlarmError(d, now, e, info);
  }
  // Never "now" from inside alarm(): a pass that filled its batch comes back shortly, a failed one later.
  if (failed) at = Math.min(at ?? Infinity, now + ALARM_RETRY_MS);
  if (again) at = Math.min(at ?? Infinity, now + ALARM_AGAIN_MS);
  if (at !== null && at <= now) at = now + (failed ? ALARM_RETRY_MS : ALARM_AGAIN_MS);
  // Re-arming is the one step left that may throw: if storage cannot take an alarm, a platform retry is the only way back.
  await d.alarmArm.set(at);
}

/** recordAlarmError logs a failed pass and keeps the last one in `meta` for operators; it never throws. */
function recordAlarmError(d: AlarmDeps, now: number, e: unknown, info?: AlarmInvocationInfo): void {
  const error = String(e);
  console.error(JSON.stringify({ event: "alarm:failed", home: d.home(), retryCount: info?.retryCount ?? 0, error }));
  try {
    d.store.sql.exec(
      "INSERT INTO meta (key, value) VALUES ('last_alarm_error', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      JSON.stringify({ at: now, error }),
    );
  } catch {
    // Storage itself is failing; the log line above is all we can leave.
  }
}
