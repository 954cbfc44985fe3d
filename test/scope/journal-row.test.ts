/**
 * The journal kept in the job's own row (src/scope/workflow/journal-row.ts; docs/design.md "A step in the job's
 * row"): a finished step is one row written, and whoever reads the journal sees one journal — the row's entries and
 * job_step's, in position order — whatever went where.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JournalWrite } from "../../src/job/handler-contract";
import { scopeRpc } from "../helpers/scope";
import type { ScopeDO } from "../../src/scope/scope-do";
import { handlerJournal } from "../../src/scope/jobs/job-row";
import { ROW_JOURNAL_MAX } from "../../src/scope/workflow/journal-row";
import { appendStep, listSteps, withJournal } from "../../src/scope/workflow/steps";
import { wait } from "../../src/scope/workflow/waits";
import { getJob } from "../../src/scope/jobs/read";
import { rowsWrittenBy } from "../helpers/rows-written";
import { freshScope, newJob, partsOf, put, T0 } from "../helpers/scope";

const start = { at: T0 - 5, seed: "00112233445566778899aabbccddeeff" };

async function leasedJob() {
  const { home, stub } = await freshScope();
  await put(stub, [newJob(home, { type: "row.job" })]);
  const [job] = await scopeRpc(stub).claim({ worker: "w", types: ["row.job"], limit: 1, leaseMs: 60_000 });
  return { stub, id: job!.id, token: job!.leaseToken! };
}

const commit = (id: string, seq: number, name: string, result: string): JournalWrite => ({ id, op: "commit", seq, name, result, startedAt: T0, start });

describe("the journal in the job's row", () => {
  it("a finished step writes one row — the job's — and the journal reads in position order, parallel steps too", async () => {
    const { stub, id, token } = await leasedJob();
    await runInDurableObject(stub, (o: ScopeDO, state) => {
      const store = partsOf(o).store;
      const sql = state.storage.sql;
      // Positions 0, 2, 1: two parallel steps that finished out of order.
      for (const [seq, name] of [[0, "a"], [2, "c"], [1, "b"]] as const) {
        const { out, written } = rowsWrittenBy(sql, () => appendStep(store, commit(id, seq, name, JSON.stringify({ n: seq })), token, T0));
        expect(out.ok).toBe(true);
        expect(written, `step ${name}`).toBe(1);
      }
      expect(sql.exec("SELECT count(*) AS n FROM job_step").one().n).toBe(0);
      expect(store.lens.openSync(listSteps(store, id)!, "reader").map((s) => [s.seq, s.name, s.result])).toEqual([[0, "a", { n: 0 }], [1, "b", { n: 1 }], [2, "c", { n: 2 }]]);
      // A replay (the next lease) gets the start record and every entry, opened for its handler (they are kept sealed).
      const journal = store.lens.openSync(handlerJournal(withJournal(store, getJob(sql, id)!).journal!, store.lens), "handler");
      expect(journal.start).toEqual(start);
      expect(journal.entries.map((e) => [e.seq, e.kind, e.result, e.attempt])).toEqual([[0, "step", '{"n":0}', 1], [1, "step", '{"n":1}', 1], [2, "step", '{"n":2}', 1]]);
      // The same write again keeps the first (a write sent twice), and a different name at a held position is nondeterminism.
      expect(appendStep(store, commit(id, 1, "b", '"other"'), token, T0).ok).toBe(true);
      expect(store.lens.openSync(listSteps(store, id)!, "reader")[1]!.result).toEqual({ n: 1 });
      expect(appendStep(store, commit(id, 1, "x", "1"), token, T0)).toMatchObject({ ok: false, code: "nondeterminism" });
    });
  });

  it("past the row's share, entries go to job_step; an atMostOnce step stays there; the journal reads as one", async () => {
    const { stub, id, token } = await leasedJob();
    await runInDurableObject(stub, (o: ScopeDO, state) => {
      const store = partsOf(o).store;
      const sql = state.storage.sql;
      const big = JSON.stringify("x".repeat(ROW_JOURNAL_MAX));
      expect(appendStep(store, commit(id, 0, "small", "1"), token, T0).ok).toBe(true);
      expect(appendStep(store, commit(id, 1, "big", big), token, T0).ok).toBe(true);
      expect(appendStep(store, { id, op: "begin", seq: 2, name: "once", result: null, startedAt: T0, start }, token, T0).ok).toBe(true);
      expect(appendStep(store, commit(id, 2, "once", "2"), token, T0).ok).toBe(true);
      expect(appendStep(store, commit(id, 3, "after", "3"), token, T0).ok).toBe(true);
      const where = sql.exec<{ seq: number }>("SELECT seq FROM job_step ORDER BY seq").toArray().map((r) => r.seq);
      expect(where).toEqual([1, 2]);
      expect(store.lens.openSync(listSteps(store, id)!, "reader").map((s) => s.name)).toEqual(["small", "big", "once", "after"]);
      // The journal's cap counts both parts.
      const bytes = sql.exec<{ n: number }>("SELECT (SELECT sum(bytes) FROM job_step) + (SELECT journal ->> 'bytes' FROM job) AS n").one().n;
      expect(bytes).toBe(["small", "big", "once", "after"].reduce((n, s) => n + s.length, 0) + 1 + big.length + 1 + 1);
    });
  });

  it("a job journaled before the row kept its start (position -1 in job_step) replays from that start", async () => {
    const { stub, id, token } = await leasedJob();
    await runInDurableObject(stub, (o: ScopeDO, state) => {
      const store = partsOf(o).store;
      const sql = state.storage.sql;
      const seq = getJob(sql, id)!.seq;
      sql.exec("INSERT INTO job_step (job_seq, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes) VALUES (?, -1, '', 'start', 'oldseed', 7, 7, 1, NULL, 0)", seq);
      sql.exec("INSERT INTO job_step (job_seq, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes) VALUES (?, 0, 'a', 'step', '0', 7, 8, 1, NULL, 2)", seq);
      expect(withJournal(store, getJob(sql, id)!).journal).toMatchObject({ start: { at: 7, seed: "oldseed" }, entries: [{ seq: 0, name: "a" }] });
      // Its first write here copies that start into the row, whatever start the write carries (as the start row's INSERT OR IGNORE kept it).
      expect(appendStep(store, { ...commit(id, 1, "b", "1"), start: { at: 99, seed: "newseed" } }, token, T0).ok).toBe(true);
      expect(withJournal(store, getJob(sql, id)!).journal).toMatchObject({ start: { at: 7, seed: "oldseed" }, entries: [{ seq: 0 }, { seq: 1 }] });
    });
  });

  it("a wait at a position the row holds a step at is nondeterminism, naming the step as journaled", async () => {
    const { stub, id, token } = await leasedJob();
    await runInDurableObject(stub, (o: ScopeDO) => {
      const store = partsOf(o).store;
      // A step named like a wait kind, then code that waits at its position under the step kind's name.
      expect(appendStep(store, commit(id, 0, "signal", "1"), token, T0).ok).toBe(true);
      const out = wait(store, id, token, { waits: [{ seq: 0, kind: "signal", name: "step", startedAt: T0 }], start }, T0);
      expect(out).toMatchObject({ ok: true, row: { state: "failed", failure_kind: "nondeterminism" } });
      expect(out.ok && out.row.last_error).toMatch(/^NondeterminismError: step 0 is "signal" in the journal, "step" in the code/);
    });
  });
});
