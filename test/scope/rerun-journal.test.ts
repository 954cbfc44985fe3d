/**
 * A rerun's journal in its object (scope/workflow/rerun.ts; docs/workflows.md "Rerun from a step"): the entries
 * before `fromStep` are copied from both parts of the old journal — the row's (a finished step) and job_step's (an
 * atMostOnce step, a wait token) — with its start record; a wait token before the cut is refused, since it was
 * signed for the old job and completes only its wait.
 */
import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JournalWrite } from "../../src/job/handler-contract";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob, put, T0 } from "../helpers/scope";

describe("a rerun's journal", () => {
  it("copies the entries before fromStep from the row and from job_step, start record and all", async () => {
    const { home, stub } = await freshScope();
    const row = (await put(stub, [newJob(home)]))[0]!.row;
    const [leased] = await stub.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
    const start = { at: T0 - 5, seed: "seed-1" };
    const write = (w: Omit<JournalWrite, "id" | "start">) => stub.appendStep({ ...w, id: row.id, start }, leased!.leaseToken);
    // a: a finished step (the row's part); b: an atMostOnce step, begun then committed (job_step's part); c: the row's.
    expect((await write({ op: "commit", seq: 0, name: "a", result: "1", startedAt: T0 })).ok).toBe(true);
    expect((await write({ op: "begin", seq: 1, name: "b", result: null, startedAt: T0 })).ok).toBe(true);
    expect((await write({ op: "commit", seq: 1, name: "b", result: "2", startedAt: T0 })).ok).toBe(true);
    expect((await write({ op: "commit", seq: 2, name: "c", result: "3", startedAt: T0 })).ok).toBe(true);
    expect((await stub.complete(row.id, leased!.leaseToken, "{}")).ok).toBe(true);

    const out = await stub.rerun(row.id, "c", null);
    if (!out.ok) throw new Error(JSON.stringify(out));
    const steps = (await scopeRpc(stub).steps(out.job.id)) as unknown as { seq: number; name: string; result: unknown }[];
    expect(steps.map((s) => [s.seq, s.name, s.result])).toEqual([
      [0, "a", 1],
      [1, "b", 2],
    ]);
    const kept = await runInDurableObject(stub, (o: ScopeDO) => {
      const seq = (id: string) => o.store.sql.exec<{ seq: number }>("SELECT seq FROM job WHERE id = ?", id).one().seq;
      return {
        rowPart: JSON.parse(o.store.sql.exec<{ journal: string }>("SELECT journal FROM job WHERE seq = ?", seq(out.job.id)).one().journal) as { at: number; seed: string; e: unknown[] },
        stepPart: o.store.sql.exec<{ seq: number; name: string }>("SELECT seq, name FROM job_step WHERE job_seq = ? ORDER BY seq", seq(out.job.id)).toArray(),
      };
    });
    // The start record is the old one's: a replay's ctx.now() and ctx.uuid() answer as they did.
    expect(kept.rowPart).toMatchObject({ at: T0 - 5, seed: "seed-1" });
    expect(kept.rowPart.e).toHaveLength(1);
    expect(kept.stepPart).toEqual([{ seq: 1, name: "b" }]);
  });

  it("refuses a fromStep after a wait token, and reruns from the token itself", async () => {
    const { home, stub } = await freshScope();
    const row = (await put(stub, [newJob(home)]))[0]!.row;
    const [leased] = await stub.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
    const start = { at: T0, seed: "s" };
    const write = (w: Omit<JournalWrite, "id" | "start">) => stub.appendStep({ ...w, id: row.id, start }, leased!.leaseToken);
    expect((await write({ op: "token", seq: 0, name: "approval", result: JSON.stringify({ timeoutMs: null }), startedAt: T0 })).ok).toBe(true);
    expect((await write({ op: "commit", seq: 1, name: "after", result: "1", startedAt: T0 })).ok).toBe(true);
    expect((await stub.complete(row.id, leased!.leaseToken, "{}")).ok).toBe(true);

    const refused = await stub.rerun(row.id, "after", null);
    expect(refused).toMatchObject({ ok: false, code: "invalid", path: "fromStep" });
    expect((refused as { reason: string }).reason).toMatch(/wait token "approval" before "after" was made for job .* rerun from "approval" or before it/);
    const ok = await stub.rerun(row.id, "approval", null);
    expect(ok.ok).toBe(true);
    expect(await stub.steps((ok as { job: { id: string } }).job.id)).toEqual([]);
  });
});
