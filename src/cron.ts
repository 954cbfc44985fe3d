/**
 * Five-field cron (minute hour day-of-month month day-of-week), UTC, minute
 * resolution. Fields take `*`, numbers, ranges `a-b`, steps `*\/s` `a-b/s`
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

const MINUTE = 60_000;
/** Far enough for any valid expression to recur (Feb 29 on a given weekday takes up to 28 years). */
const HORIZON_DAYS = 366 * 30;

function dayMatches(c: Cron, d: Date): boolean {
  if (!c.months.has(d.getUTCMonth() + 1)) return false;
  const dom = c.days.has(d.getUTCDate());
  const dow = c.weekdays.has(d.getUTCDay());
  return c.either ? dom || dow : dom && dow;
}

/** nextAfter: the first slot strictly after `t` (epoch ms), or null if the expression never matches (e.g. Feb 30). */
export function nextAfter(c: Cron, t: number): number | null {
  let m = Math.floor(t / MINUTE) * MINUTE + MINUTE;
  for (let days = 0; days <= HORIZON_DAYS; days++) {
    const d = new Date(m);
    if (dayMatches(c, d)) {
      for (let h = d.getUTCHours(); h < 24; h++) {
        if (!c.hours.has(h)) continue;
        const fromMinute = h === d.getUTCHours() ? d.getUTCMinutes() : 0;
        for (let min = fromMinute; min < 60; min++) {
          if (c.minutes.has(min)) return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), h, min);
        }
      }
    }
    m = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  }
  return null;
}

/** prevAtOrBefore: the last slot at or before `t`, or null if there is none within the horizon. */
export function prevAtOrBefore(c: Cron, t: number): number | null {
  let m = Math.floor(t / MINUTE) * MINUTE;
  for (let days = 0; days <= HORIZON_DAYS; days++) {
    const d = new Date(m);
    if (dayMatches(c, d)) {
      for (let h = d.getUTCHours(); h >= 0; h--) {
        if (!c.hours.has(h)) continue;
        const fromMinute = h === d.getUTCHours() ? d.getUTCMinutes() : 59;
        for (let min = fromMinute; min >= 0; min--) {
          if (c.minutes.has(min)) return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), h, min);
        }
      }
    }
    m = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - MINUTE; // 23:59 of the day before
  }
  return null;
}
