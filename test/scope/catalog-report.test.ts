/** The catalog reporter: what a summary must carry when writes never stop. */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CatalogReporter, REPORT_HOLD_MS, REPORT_MIN_INTERVAL_MS } from "../../src/scope/report/catalog-report";
import type { ReportUrgency } from "../../src/scope/jobs/changes";
import type { HomeSummary } from "../../src/scope/report/summary";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, T0 } from "../helpers/scope";

describe("catalog reporter", () => {
  it("after a summary lands, the next carries only what came after it, though writes never let the object go clean", async () => {
    const { stub } = await freshScope();
    const asked = await runInDurableObject(stub, async (o: ScopeDO) => {
      let now = T0;
      const sinces: (number | null)[] = [];
      let release: () => void = () => {};
      const reporter = new CatalogReporter({
        sql: o.store.sql,
        now: () => now,
        build: (since) => {
          sinces.push(since);
          return { home: "h", at: now, types: [], metrics: [] } satisfies HomeSummary;
        },
        send: () => new Promise<void>((r) => (release = r)),
        keepAlive: () => {},
        rearm: async () => {},
      });
      reporter.touched(now); // the busy period starts
      const first = reporter.flush();
      await Promise.resolve();
      await Promise.resolve();
      now = T0 + 30 * 60_000; // half an hour later, a write lands while the send is in flight
      reporter.touched(now);
      release();
      await first;
      expect(reporter.unreportedSince()).toBe(T0); // built at T0: the catalog has everything up to then
      now = T0 + 31 * 60_000;
      const second = reporter.flush();
      await Promise.resolve();
      await Promise.resolve();
      release();
      await second;
      return sinces;
    });
    // The first summary was built at T0, so the second needs nothing older — not the whole busy period.
    expect(asked).toEqual([T0, T0]);
  });

  /** A reporter over a real object's SQL whose sends land at once; `sent` lists when each summary was built. */
  function reporterIn(o: ScopeDO, clock: { now: number }) {
    const sent: number[] = [];
    const reporter = new CatalogReporter({
      sql: o.store.sql,
      now: () => clock.now,
      build: () => ({ home: "h", at: clock.now, types: [], metrics: [] }) satisfies HomeSummary,
      send: async () => {
        sent.push(clock.now);
      },
      keepAlive: () => {},
      rearm: async () => {},
    });
    const change = async (urgency: ReportUrgency) => {
      reporter.touched(clock.now);
      reporter.kick(urgency);
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    return { reporter, sent, change };
  }

  it("a push burst's changes (held) go out as one summary, REPORT_HOLD_MS after the first, from the alarm", async () => {
    const { stub } = await freshScope();
    const out = await runInDurableObject(stub, async (o: ScopeDO) => {
      const clock = { now: T0 };
      const { reporter, sent, change } = reporterIn(o, clock);
      await change("hold"); // enqueued
      const deadline = reporter.deadline();
      clock.now = T0 + 40;
      await change("hold"); // leased
      clock.now = T0 + 90;
      await change("hold"); // settled
      const heldUntil = reporter.deadline();
      const before = [...sent];
      clock.now = heldUntil!;
      await reporter.flush(); // the alarm, at the deadline
      return { deadline, heldUntil, before, sent };
    });
    expect(out.before).toEqual([]);
    expect(out.deadline).toBe(T0 + REPORT_HOLD_MS);
    expect(out.heldUntil).toBe(T0 + REPORT_HOLD_MS);
    expect(out.sent).toEqual([T0 + REPORT_HOLD_MS]);
  });

  it("a change told now is not held: it takes held ones with it, and brings a held burst's deadline forward", async () => {
    const { stub } = await freshScope();
    const out = await runInDurableObject(stub, async (o: ScopeDO) => {
      const clock = { now: T0 };
      const { reporter, sent, change } = reporterIn(o, clock);
      await change("hold");
      clock.now = T0 + 10;
      await change("now"); // a pulled job: at once, the held change with it
      const afterNow = [...sent];
      clock.now = T0 + 500;
      await change("hold");
      const held = reporter.deadline();
      clock.now = T0 + 600;
      await change("now"); // too soon after a summary to send: the alarm's, at the interval, not at the held burst's end
      return { afterNow, held, owed: reporter.deadline(), sent };
    });
    expect(out.afterNow).toEqual([T0 + 10]);
    expect(out.held).toBe(T0 + 500 + REPORT_HOLD_MS);
    expect(out.owed).toBe(T0 + 10 + REPORT_MIN_INTERVAL_MS);
    expect(out.sent).toEqual([T0 + 10]);
  });

  it("a change held while a send is in flight counts its second from itself, not from the next change", async () => {
    const { stub } = await freshScope();
    const out = await runInDurableObject(stub, async (o: ScopeDO) => {
      const clock = { now: T0 };
      let release: () => void = () => {};
      const reporter = new CatalogReporter({
        sql: o.store.sql,
        now: () => clock.now,
        build: () => ({ home: "h", at: clock.now, types: [], metrics: [] }) satisfies HomeSummary,
        send: () => new Promise<void>((r) => (release = r)),
        keepAlive: () => {},
        rearm: async () => {},
      });
      const tick = async () => {
        for (let i = 0; i < 5; i++) await Promise.resolve();
      };
      reporter.touched(clock.now);
      reporter.kick("now"); // a send goes out, and is in flight until release()
      await tick();
      clock.now = T0 + 10;
      reporter.touched(clock.now);
      reporter.kick("hold"); // after that send was built: it is not in it
      clock.now = T0 + 50;
      release();
      await tick();
      clock.now = T0 + 1_000;
      reporter.touched(clock.now);
      reporter.kick("hold");
      return reporter.deadline();
    });
    // The interval after the last send (T0 + 50) bounds it; counted from the change at T0 + 1,000 it would be T0 + 2,000.
    expect(out).toBe(T0 + 50 + REPORT_MIN_INTERVAL_MS);
  });
});

