/** The catalog reporter: what a summary must carry when writes never stop. */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CatalogReporter } from "../../src/scope/catalog-report";
import type { HomeSummary } from "../../src/scope/summary";
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
});
