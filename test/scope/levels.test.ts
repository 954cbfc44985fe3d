/**
 * Due-time questions without a (type, run_at) index (scope/jobs/levels.ts): each is one seek per priority level on
 * job_claim_idx, so what a question reads does not grow with the backlog — checked by the rows each
 * statement's cursor read, over 900 pending jobs on three levels, most of them due.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { meterOf } from "../../src/metering/meter";
import { countDue, dueTypesAmong } from "../../src/scope/jobs/claim";
import { buildSummary } from "../../src/scope/report/summary";
import { freshScope, newJob, T0, readWakeRow } from "../helpers/scope";

describe("due times per priority level", () => {
  it("answer from a few index entries, whatever the backlog", async () => {
    const { home, stub } = await freshScope();
    const jobs = [0, 5, 9].flatMap((priority) =>
      Array.from({ length: 300 }, (_, i) => newJob(home, { type: "test.job", priority, runAt: i < 290 ? T0 - 1000 + i : T0 + 60_000 + i })),
    );
    await stub.enqueue(jobs);
    const out = await runInDurableObject(stub, (o: ScopeDO) => {
      const sql = o.store.sql;
      const read = (fn: () => unknown) => {
        const before = meterOf(o)!.report().total.rowsRead;
        const answer = fn();
        return { answer, read: meterOf(o)!.report().total.rowsRead - before };
      };
      return {
        wake: read(() => readWakeRow(o, T0).due),
        due: read(() => countDue(sql, "test.job", T0, 1)),
        count: read(() => countDue(sql, "test.job", T0, 10)),
        among: read(() => dueTypesAmong(sql, ["test.job", "other"], T0)),
        // A config with many pushed types reads no more: the list is matched as text, not read row by row (claim.ts).
        amongMany: read(() => dueTypesAmong(sql, [...Array.from({ length: 200 }, (_, i) => `pushed.${i}`), "test.job"], T0)),
        // Whole names only: a name that holds this type's, or another's with a quote in it, is not this type.
        amongNot: dueTypesAmong(sql, ["xtest.job", "test.jobx", 'a","test.job', "test.job\\"], T0),
        summary: read(() => buildSummary(o.store, home, T0).types.find((t) => t.type === "test.job")),
      };
    });
    expect(out.wake.answer).toBe(T0 + 60_000 + 290);
    expect(out.due.answer).toBe(1);
    expect(out.count.answer).toBe(10);
    expect(out.among.answer).toEqual(["test.job"]);
    expect(out.amongMany).toEqual(out.among);
    expect(out.amongNot).toEqual([]);
    expect(out.summary.answer).toMatchObject({ pending: 870, scheduled: 30, nextRunAt: T0 - 1000 });
    // A handful of entries per level: not the 900 jobs (the summary counts the 30 scheduled ones by range).
    for (const q of [out.wake, out.due, out.count, out.among]) expect(q.read).toBeLessThan(40);
    expect(out.summary.read).toBeLessThan(80);
  });
});
