/**
 * Answers of a scope object still running the previous version (rows) read
 * as this version's wire types (views), and this version's pass unchanged
 * (scope/wire-compat.ts): the bridge for the minutes a deploy takes.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { fromPrevious } from "../../src/scope/wire-compat";
import { toJob, toLeasedJob, type JobRow } from "../../src/scope/jobs/job-row";
import { PLAIN_LENS } from "../../src/sealing/lens";
import { freshScope, newJob, rows } from "../helpers/scope";

describe("answers from the previous version", () => {
  it("read rows as views; views pass unchanged", async () => {
    const { home, stub } = await freshScope();
    const { fresh, leasedNow } = await runInDurableObject(stub, async (o: ScopeDO) => {
      const answered = await o.enqueue([newJob(home), newJob(home)]);
      const claimed = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
      return { fresh: answered, leasedNow: claimed };
    });
    const [a, b] = (await rows(stub)) as [JobRow, JobRow];
    const running = a.state === "running" ? a : b;
    const pending = a.state === "running" ? b : a;
    expect(fromPrevious("get", pending)).toEqual(toJob(pending, PLAIN_LENS));
    expect(fromPrevious("complete", { ok: true, row: pending })).toEqual({ ok: true, job: toJob(pending, PLAIN_LENS) });
    expect(fromPrevious("fail", { ok: true, row: pending, outcome: "failed" })).toEqual({ ok: true, job: toJob(pending, PLAIN_LENS), outcome: "failed" });
    expect(fromPrevious("fail", { ok: false, code: "lease_lost", reason: "expired" })).toEqual({ ok: false, code: "lease_lost", reason: "expired" });
    expect(fromPrevious("enqueue", { ok: true, results: [{ row: pending, created: true }, { row: null, created: false }] })).toEqual({
      ok: true,
      results: [{ job: toJob(pending, PLAIN_LENS), created: true }, { job: null, created: false }],
    });
    expect(fromPrevious("commitDecidingBatch", { decision: "commit", outcome: { ok: true, results: [{ row: pending, created: true }] } })).toEqual({
      decision: "commit",
      outcome: { ok: true, results: [{ job: toJob(pending, PLAIN_LENS), created: true }] },
    });
    expect(fromPrevious("claim", [running])).toEqual([toLeasedJob(running, PLAIN_LENS)]);
    expect(fromPrevious("claimOrEnqueue", { ok: true, job: running, created: false, leased: running })).toEqual({ ok: true, job: toJob(running, PLAIN_LENS), created: false, leased: toLeasedJob(running, PLAIN_LENS) });
    expect(fromPrevious("list", [a, b], 2)).toEqual({ jobs: [toJob(a, PLAIN_LENS), toJob(b, PLAIN_LENS)], next: b.seq });
    expect(fromPrevious("list", [a], 2)).toEqual({ jobs: [toJob(a, PLAIN_LENS)], next: null });
    // This version's answers are left as they are.
    expect(fromPrevious("enqueue", fresh)).toEqual(fresh);
    expect(fromPrevious("claim", leasedNow)).toEqual(leasedNow);
    expect(fromPrevious("get", toJob(pending, PLAIN_LENS))).toEqual(toJob(pending, PLAIN_LENS));
    expect(fromPrevious("list", { jobs: [], next: null }, 2)).toEqual({ jobs: [], next: null });
  });
});
