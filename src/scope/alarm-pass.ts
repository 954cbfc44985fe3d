/**
 * A scope object's alarm: each capability's share, in the list's order
 * (capability.ts) — the reap pass and expiries (the core), waits' timeouts and
 * the outbox (workflow), the retention sweep, stale batch parts, parked
 * claims and permits (pull), the dispatcher's timer (push), callbacks
 * (watching), and the catalog's safety net last (report) — then the alarm set
 * for the next wake-up (docs/design.md "Time and the alarm"). It never throws
 * while storage can still take an alarm: a failed share is logged, kept in
 * `meta`, and the pass retried ALARM_RETRY_MS later; the other shares still run.
 *
 * @module
 */
import type { AlarmArm } from "../alarm-arm";
import type { AlarmPass, Capability } from "./jobs/capability";
import type { Changes } from "./jobs/changes";
import type { HomeStore } from "./jobs/home-store";
import { cameDueSince } from "./wake";

export interface AlarmDeps {
  store: HomeStore;
  alarmArm: AlarmArm;
  capabilities: readonly Capability[];
  /** When the catalog last heard from this instance (what came due since is told to parked claims and the catalog). */
  lastReported(): number | null;
  /** This object's name, for logs. */
  home(): string | null;
  /** Runs what follows a write (follow-ups.ts). */
  followUp(changes: Changes, now: number): Promise<void>;
  /** The next wake-up this object needs, or null. */
  wakeAt(now: number): number | null;
}

export async function alarmPass(d: AlarmDeps, now: number, info?: AlarmInvocationInfo): Promise<void> {
  d.alarmArm.consumed();
  let more = false;
  let failed = false;
  let cameDue: string[] | null = null;
  try {
    cameDue = cameDueSince(d.store, d.lastReported(), now);
  } catch (e) {
    failed = true;
    recordAlarmError(d, now, e, info, "jobs");
  }
  const pass: AlarmPass = {
    now,
    cameDue,
    // A write of the pass runs its follow-ups, but the catalog and the alarm are the pass's own (report, below).
    commit: async (w) => {
      await d.followUp({ ...w.changes, report: null, arm: false }, now);
      return w.answer;
    },
  };
  for (const c of d.capabilities) {
    if (!c.alarm) continue;
    try {
      if ((await c.alarm(pass)) === true) more = true;
    } catch (e) {
      failed = true;
      recordAlarmError(d, now, e, info, c.name);
    }
  }
  let at: number | null = null;
  try {
    at = d.wakeAt(now);
  } catch (e) {
    failed = true;
    recordAlarmError(d, now, e, info, "wake");
  }
  // Re-arming is the one step left that may throw: if storage cannot take an alarm, a platform retry is the only way back.
  await d.alarmArm.setAfterPass(at, now, { failed, more });
}

/** recordAlarmError logs a failed share and keeps the last one in `meta` for operators; it never throws. */
function recordAlarmError(d: AlarmDeps, now: number, e: unknown, info: AlarmInvocationInfo | undefined, part: string): void {
  const error = String(e);
  console.error(JSON.stringify({ event: "alarm:failed", home: d.home(), part, retryCount: info?.retryCount ?? 0, error }));
  try {
    d.store.sql.exec(
      "INSERT INTO meta (key, value) VALUES ('last_alarm_error', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      JSON.stringify({ at: now, error }),
    );
  } catch {
    // Storage itself is failing; the log line above is all we can leave.
  }
}
