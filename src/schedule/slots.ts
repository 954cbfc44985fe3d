/**
 * When a schedule fires. A trigger is a cron expression, a fixed grid
 * (`everyMs` from an anchor, so it never drifts) or a single time. `planFires`
 * decides, at `now`, which due slots fire under the misfire policy — and from
 * which slot the schedule goes on (always its first slot after the last due
 * one, on its own grid).
 *
 * @module
 */
import { CronSchedule, parseCron } from "../cron";
import type { Misfire } from "../job/schedule-spec";

export type Trigger = { kind: "cron"; cron: CronSchedule } | { kind: "every"; everyMs: number; anchor: number } | { kind: "at"; at: number };

/** A slot more than this late is a missed one (platform alarms can run up to a minute late). */
export const ON_TIME_MS = 60_000;
/** Counting missed slots for a catchup warning stops here. */
const COUNT_LIMIT = 1_000_000;

export function triggerOf(s: { cron: string | null; tz?: string | null; everyMs: number | null; at: number | null; anchor: number }): Trigger {
  if (s.cron !== null) return { kind: "cron", cron: new CronSchedule(parseCron(s.cron), s.tz ?? "UTC") };
  if (s.everyMs !== null) return { kind: "every", everyMs: s.everyMs, anchor: s.anchor };
  return { kind: "at", at: s.at! };
}

/** firstSlotAfter: the first slot strictly after t, or null when none remain. */
export function firstSlotAfter(t: Trigger, after: number): number | null {
  switch (t.kind) {
    case "cron":
      return t.cron.nextAfter(after);
    case "every":
      return after < t.anchor ? t.anchor : t.anchor + (Math.floor((after - t.anchor) / t.everyMs) + 1) * t.everyMs;
    case "at":
      return after < t.at ? t.at : null;
  }
}

/** lastSlotAtOrBefore: the last slot at or before t, or null. */
export function lastSlotAtOrBefore(t: Trigger, atOrBefore: number): number | null {
  switch (t.kind) {
    case "cron":
      return t.cron.prevAtOrBefore(atOrBefore);
    case "every":
      return atOrBefore < t.anchor ? null : t.anchor + Math.floor((atOrBefore - t.anchor) / t.everyMs) * t.everyMs;
    case "at":
      return t.at <= atOrBefore ? t.at : null;
  }
}

export interface FirePlan {
  /** Slots to fire now, oldest first. */
  fire: number[];
  /** Missed slots that will not fire (catchup past maxCatchup). */
  skipped: number;
  oldestSkipped: number | null;
  /** The schedule's next slot after this pass, or null when it is done. */
  nextRunAt: number | null;
}

/**
 * planFires: `next` is the schedule's first slot not yet fired or skipped.
 * Slots in [next, now] are due; the policy picks which of them fire.
 */
export function planFires(t: Trigger, next: number | null, now: number, misfire: Misfire, maxCatchup: number): FirePlan {
  if (next === null || next > now) return { fire: [], skipped: 0, oldestSkipped: null, nextRunAt: next };
  const last = lastSlotAtOrBefore(t, now) ?? next;
  const nextRunAt = firstSlotAfter(t, last);
  const plan = (fire: number[], skipped = 0, oldestSkipped: number | null = null): FirePlan => ({ fire, skipped, oldestSkipped, nextRunAt });
  switch (misfire) {
    case "latest":
      return plan([last]);
    case "earliest":
      return plan([next]);
    case "none":
      // Only a slot that is on time runs; every missed one is dropped.
      return plan(now - last <= ON_TIME_MS ? [last] : []);
    case "catchup": {
      // The latest maxCatchup slots, walking back from the last; then count what is skipped before them.
      const kept: number[] = [];
      for (let s: number | null = last; s !== null && s >= next && kept.length < maxCatchup; s = lastSlotAtOrBefore(t, s - 1)) kept.push(s);
      kept.reverse(); // oldest first (unshift per slot was quadratic in maxCatchup)
      let skipped = 0;
      for (let s: number | null = next; s !== null && s < kept[0]! && skipped < COUNT_LIMIT; s = firstSlotAfter(t, s)) skipped++;
      return plan(kept, skipped, skipped > 0 ? next : null);
    }
  }
}
