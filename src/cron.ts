/**
 * Five-field cron (minute hour day-of-month month day-of-week), minute
 * resolution, in UTC or a time zone (CronSchedule). Fields take `*`, numbers, ranges `a-b`, steps `*\/s` `a-b/s`
 * `a/s`, lists `a,b`, and names for months (JAN–DEC) and days (SUN–SAT);
 * day-of-week 7 is Sunday too. As in Vixie cron, when both day-of-month and
 * day-of-week are restricted a day matches either; when one is `*`, only the
 * other counts.
 *
 * A leaf of its own: the schedule spec (job/schedule-spec.ts) validates with
 * it, below the config, and the schedule object (schedule/slots.ts) plans
 * its slots with it.
 *
 * @module
 */

import { Cron as Croner } from "croner";

export interface Cron {
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Day-of-month and day-of-week both restricted: a day matches either. */
  either: boolean;
}

export class CronError extends Error {
  override readonly name = "CronError";
}

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"] },
  { name: "day-of-week", min: 0, max: 7, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] },
] as const;

/** parseCron throws a CronError naming the field and the problem. */
export function parseCron(expr: string): Cron {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const sets = parts.map((p, i) => parseField(p, FIELDS[i]!));
  const weekdays = new Set([...sets[4]!].map((d) => d % 7));
  return {
    minutes: sets[0]!,
    hours: sets[1]!,
    days: sets[2]!,
    months: sets[3]!,
    weekdays,
    either: !parts[2]!.startsWith("*") && !parts[4]!.startsWith("*"),
  };
}

function parseField(text: string, f: (typeof FIELDS)[number]): Set<number> {
  const out = new Set<number>();
  const bad = (why: string) => new CronError(`${f.name} field "${text}": ${why}`);
  const value = (s: string): number => {
    const named = "names" in f ? (f.names as readonly string[]).indexOf(s.toUpperCase()) : -1;
    const n = named >= 0 ? named + (f.name === "month" ? 1 : 0) : /^\d+$/.test(s) ? Number(s) : NaN;
    if (!Number.isInteger(n)) throw bad(`"${s}" is not a number${"names" in f ? " or a name" : ""}`);
    if (n < f.min || n > f.max) throw bad(`${n} is out of range ${f.min}-${f.max}`);
    return n;
  };
  for (const item of text.split(",")) {
    if (item === "") throw bad("empty list item");
    const [range, stepText, extra] = item.split("/");
    if (extra !== undefined) throw bad(`"${item}" has more than one /`);
    const step = stepText === undefined ? 1 : /^\d+$/.test(stepText) && Number(stepText) > 0 ? Number(stepText) : NaN;
    if (!Number.isInteger(step)) throw bad(`step "${stepText}" must be a positive whole number`);
    let lo: number;
    let hi: number;
    if (range === "*") [lo, hi] = [f.min, f.max];
    else if (range!.includes("-")) {
      const [a, b, more] = range!.split("-");
      if (more !== undefined || !a || !b) throw bad(`"${range}" is not a range a-b`);
      [lo, hi] = [value(a), value(b)];
      if (lo > hi) throw bad(`range ${range} runs backwards`);
    } else {
      lo = value(range!);
      hi = stepText === undefined ? lo : f.max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

/**
 * CronSchedule: an expression's slots in a time zone, computed by croner (a kept library: time zones and daylight
 * saving are its job, not a hand-written search's). It is given the expression as parsed here — every field as the
 * explicit list of its values, day-of-week 7 as 0, and whether a day matches either of its two fields — so what
 * matches is exactly what this parser says (croner's own syntax refuses `a/s` and words its errors otherwise).
 * Slots are wall-clock times in `tz`: a time the clocks skip (02:30 on the night they go forward) fires at the first
 * minute after the gap (03:00), and a time they pass twice (02:30 on the night they go back) fires once, the first
 * time (docs/schedules-and-events.md).
 */
export class CronSchedule {
  private readonly runner: Croner;

  constructor(
    readonly cron: Cron,
    readonly tz: string = "UTC",
  ) {
    const list = (s: Set<number>) => [...s].sort((a, b) => a - b).join(",");
    const pattern = [list(cron.minutes), list(cron.hours), list(cron.days), list(cron.months), list(cron.weekdays)].join(" ");
    this.runner = new Croner(pattern, { paused: true, timezone: tz, domAndDow: !cron.either });
  }

  /** nextAfter: the first slot strictly after `t` (epoch ms), or null if the expression never matches (e.g. Feb 30). */
  nextAfter(t: number): number | null {
    return this.runner.nextRun(new Date(t))?.getTime() ?? null;
  }

  /** prevAtOrBefore: the last slot at or before `t`, or null. */
  prevAtOrBefore(t: number): number | null {
    // croner answers the runs before its reference; a run 1 ms before the next millisecond is one at `t`.
    return this.runner.previousRuns(1, new Date(t + 1))[0]?.getTime() ?? null;
  }
}

/** checkTimeZone: throws a CronError unless `tz` is an IANA time zone this runtime knows ("UTC", "Europe/Berlin"). */
export function checkTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    throw new CronError(`"${tz}" is not an IANA time zone name (like "UTC", "Europe/Berlin", "America/New_York")`);
  }
}

/** localTime: `t` as the wall clock in `tz` shows it, with its offset: 2026-03-29T03:00:00+02:00. */
export function localTime(t: number, tz: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" })
      .formatToParts(new Date(t))
      .map((p) => [p.type, p.value]),
  );
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  const offset = Math.round((wall - Math.floor(t / 1000) * 1000) / 60_000);
  const sign = offset < 0 ? "-" : "+";
  const pad = (n: number) => String(Math.abs(n)).padStart(2, "0");
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}
