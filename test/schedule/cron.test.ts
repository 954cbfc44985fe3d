import { describe, expect, it } from "vitest";
import { checkTimeZone, CronError, CronSchedule, localTime, parseCron, type Cron } from "../../src/cron";
import { int, pick, seeded } from "../helpers/random";

const at = (s: string) => Date.parse(`${s}Z`);
const nextAfter = (c: Cron, t: number) => new CronSchedule(c).nextAfter(t);
const prevAtOrBefore = (c: Cron, t: number) => new CronSchedule(c).prevAtOrBefore(t);

/** The reference: every minute, one by one. */
function matches(expr: string, t: number): boolean {
  const [mi, h, dom, mo, dow] = expr.split(" ");
  const d = new Date(t);
  const inField = (f: string, v: number, min: number, max: number) =>
    f.split(",").some((item) => {
      const [range, step] = item.split("/");
      const [lo, hi] = range === "*" ? [min, max] : range!.includes("-") ? range!.split("-").map(Number) : [Number(range), step ? max : Number(range)];
      return v >= lo! && v <= hi! && (v - lo!) % Number(step ?? 1) === 0;
    });
  const domOk = inField(dom!, d.getUTCDate(), 1, 31);
  const dowOk = inField(dow!, d.getUTCDay(), 0, 6) || (d.getUTCDay() === 0 && inField(dow!, 7, 0, 7));
  const day = !dom!.startsWith("*") && !dow!.startsWith("*") ? domOk || dowOk : domOk && dowOk;
  return inField(mi!, d.getUTCMinutes(), 0, 59) && inField(h!, d.getUTCHours(), 0, 23) && inField(mo!, d.getUTCMonth() + 1, 1, 12) && day;
}

describe("cron", () => {
  it("ranges, steps, lists and names", () => {
    const c = parseCron("0,30 9-17/2 * JAN-MAR mon-fri");
    expect([...c.minutes]).toEqual([0, 30]);
    expect([...c.hours]).toEqual([9, 11, 13, 15, 17]);
    expect([...c.months]).toEqual([1, 2, 3]);
    expect([...c.weekdays]).toEqual([1, 2, 3, 4, 5]);
    expect([...parseCron("5/20 * * * 7").minutes]).toEqual([5, 25, 45]);
    expect([...parseCron("* * * * 7").weekdays]).toEqual([0]);
  });

  it("next and prev slots", () => {
    const c = parseCron("*/15 * * * *");
    expect(nextAfter(c, at("2030-01-01T00:00:00"))).toBe(at("2030-01-01T00:15:00"));
    expect(nextAfter(c, at("2030-01-01T00:14:59"))).toBe(at("2030-01-01T00:15:00"));
    expect(prevAtOrBefore(c, at("2030-01-01T00:15:00"))).toBe(at("2030-01-01T00:15:00"));
    expect(prevAtOrBefore(c, at("2030-01-01T00:14:59"))).toBe(at("2030-01-01T00:00:00"));
    expect(nextAfter(parseCron("0 0 29 2 *"), at("2030-03-01T00:00:00"))).toBe(at("2032-02-29T00:00:00"));
    expect(nextAfter(parseCron("0 0 30 2 *"), at("2030-01-01T00:00:00"))).toBeNull();
  });

  it("day-of-month and day-of-week: either matches when both are restricted, only the other when one is *", () => {
    // 2030-01-01 is a Tuesday.
    const either = parseCron("0 12 15 * MON");
    expect(nextAfter(either, at("2030-01-01T00:00:00"))).toBe(at("2030-01-07T12:00:00")); // the Monday comes before the 15th
    const domOnly = parseCron("0 12 15 * *");
    expect(nextAfter(domOnly, at("2030-01-01T00:00:00"))).toBe(at("2030-01-15T12:00:00"));
    const dowOnly = parseCron("0 12 * * MON");
    expect(nextAfter(dowOnly, at("2030-01-01T00:00:00"))).toBe(at("2030-01-07T12:00:00"));
  });

  it.each([
    ["* * * *", /expected 5 fields/],
    ["60 * * * *", /minute field "60": 60 is out of range 0-59/],
    ["* 24 * * *", /hour field "24"/],
    ["* * 0 * *", /day-of-month field "0"/],
    ["* * * 13 *", /month field "13"/],
    ["* * * * 8", /day-of-week field "8"/],
    ["*/0 * * * *", /minute field "\*\/0": step "0"/],
    ["5-1 * * * *", /range 5-1 runs backwards/],
    ["* * * FOO *", /month field "FOO": "FOO" is not a number or a name/],
    ["1,,2 * * * *", /empty list item/],
  ])("refuses %j, naming the field", (expr, problem) => {
    expect(() => parseCron(expr)).toThrow(CronError);
    expect(() => parseCron(expr)).toThrow(problem);
  });

  it("agrees with minute-by-minute matching on random expressions (seeded)", () => {
    const rand = seeded(5);
    const fieldOf = (min: number, max: number) => {
      const a = int(rand, min, max);
      const b = int(rand, a, max);
      return pick(rand, ["*", `${a}`, `${a}-${b}`, `*/${int(rand, 2, 7)}`, `${a}-${b}/${int(rand, 1, 3)}`, `${a},${b}`])!;
    };
    for (let i = 0; i < 60; i++) {
      const expr = [fieldOf(0, 59), fieldOf(0, 23), pick(rand, ["*", fieldOf(1, 31)])!, pick(rand, ["*", fieldOf(1, 12)])!, pick(rand, ["*", fieldOf(0, 6)])!].join(" ");
      const c = parseCron(expr);
      let t = at("2030-01-01T00:00:00") + int(rand, 0, 86_400_000);
      for (let k = 0; k < 5; k++) {
        const next = nextAfter(c, t);
        if (next === null) break;
        expect(matches(expr, next), `${expr} @ ${new Date(next).toISOString()}`).toBe(true);
        // Nothing matches between t and next (checked over up to two days of minutes).
        for (let m = Math.floor(t / 60_000) * 60_000 + 60_000; m < next && m < t + 2 * 86_400_000; m += 60_000) {
          expect(matches(expr, m), `${expr} skipped ${new Date(m).toISOString()}`).toBe(false);
        }
        expect(prevAtOrBefore(c, next)).toBe(next);
        expect(prevAtOrBefore(c, next - 1)).not.toBe(next);
        t = next;
      }
    }
  });

  it("in a time zone: the wall-clock time, across daylight saving changes; a skipped time fires after the gap, a repeated one once", () => {
    const berlin = (expr: string) => new CronSchedule(parseCron(expr), "Europe/Berlin");
    const daily = berlin("30 2 * * *");
    const runs = (s: CronSchedule, from: number, n: number) => {
      const out: string[] = [];
      for (let t = from, i = 0; i < n; i++) out.push(localTime((t = s.nextAfter(t)!), "Europe/Berlin"));
      return out;
    };
    // 2026-03-29: clocks go from 02:00 to 03:00 — 02:30 does not exist; it fires at 03:00.
    expect(runs(daily, at("2026-03-27T12:00:00"), 3)).toEqual(["2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"]);
    // 2026-10-25: clocks go from 03:00 back to 02:00 — 02:30 happens twice; it fires once, the first time.
    expect(runs(daily, at("2026-10-24T12:00:00"), 2)).toEqual(["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"]);
    // 09:00 in New York is 14:00 UTC in winter, 13:00 in summer.
    const ny = new CronSchedule(parseCron("0 9 * * MON-FRI"), "America/New_York");
    expect(ny.nextAfter(at("2026-01-05T00:00:00"))).toBe(at("2026-01-05T14:00:00"));
    expect(ny.nextAfter(at("2026-07-06T00:00:00"))).toBe(at("2026-07-06T13:00:00"));
    expect(ny.prevAtOrBefore(at("2026-07-06T13:00:00"))).toBe(at("2026-07-06T13:00:00"));
    expect(localTime(at("2026-01-05T14:00:00"), "America/New_York")).toBe("2026-01-05T09:00:00-05:00");
    expect(localTime(at("2026-01-05T14:00:00"), "Asia/Kolkata")).toBe("2026-01-05T19:30:00+05:30");
    expect(() => checkTimeZone("Mars/Base")).toThrow(/"Mars\/Base" is not an IANA time zone/);
    expect(() => checkTimeZone("Europe/Berlin")).not.toThrow();
  });
});
