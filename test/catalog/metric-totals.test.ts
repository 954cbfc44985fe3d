/**
 * The catalog's metric totals (catalog/metrics-store.ts): the series' minutes kept plus a base the dropped minutes
 * are added to, so a summary's growth writes its series row alone and the totals outlive the minutes.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applyMetrics, METRIC_RETENTION_MS, metricTotals } from "../../src/catalog/metrics-store";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { env } from "../helpers/scope";
import { rowsWrittenBy } from "../helpers/rows-written";

const row = (minute: number, completed: number) => ({ minute, type: "t", enqueued: completed, started: completed, completed, failed: 0, retried: 0, cancelled: 0 });

describe("metric totals", () => {
  it("grow with a summary's minutes, writing the home's minute and the series' alone; a dropped minute stays in them", async () => {
    const c = env.CATALOG.getByName(`catalog-totals-${crypto.randomUUID()}`);
    const got = await runInDurableObject(c, (_o: CatalogDO, state) => {
      const sql = state.storage.sql;
      const t0 = Date.UTC(2031, 0, 1);
      const { written: first } = rowsWrittenBy(sql, () => {
        applyMetrics(sql, "scope:a", [row(t0, 3)], t0);
      });
      applyMetrics(sql, "scope:a", [row(t0, 5)], t0 + 1_000); // the same minute grew
      applyMetrics(sql, "scope:b", [row(t0 + 60_000, 2)], t0 + 60_000);
      const before = metricTotals(sql, "t")[0];
      // A day on: both minutes are dropped, into the totals' base.
      applyMetrics(sql, "scope:a", [], t0 + METRIC_RETENTION_MS + 120_000);
      const series = sql.exec<{ n: number }>("SELECT count(*) AS n FROM metric_series").one().n;
      return { first, before, after: metricTotals(sql, "t")[0], series };
    });
    // The home's minute row and the series' row: the table keyed by its primary key alone writes each once.
    expect(got.first).toBe(2);
    expect(got.before).toMatchObject({ type: "t", completed: 7, enqueued: 7 });
    expect(got.series).toBe(0);
    expect(got.after).toEqual(got.before);
  });
});
