import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { jsonChunks } from "../../src/scope/jobs/json-chunks";
import { describe, expect, it } from "vitest";
import { enqueueJobs, type NewJob } from "../../src/scope/jobs/enqueue";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob, rows, T0, put } from "../helpers/scope";

describe("enqueue (scope object)", () => {
  it("inserts a pending job due now, with the type's maxAttempts when none is given", async () => {
    const { home, stub } = await freshScope();
    const [r] = await put(stub, [newJob(home, { maxAttempts: null })]);
    expect(r!.created).toBe(true);
    expect(r!.row).toMatchObject({ state: "pending", run_at: T0, attempts: 0, max_attempts: 3 });
  });

  it("returns the existing job for a duplicate id, in any state", async () => {
    const { home, stub } = await freshScope();
    const job = newJob(home, { id: "same" });
    await put(stub, [job]);
    await scopeRpc(stub).cancel(job.id, null);
    const [again] = await put(stub, [{ ...job, payload: '{"other":true}' }]);
    expect(again!.created).toBe(false);
    expect(again!.row.state).toBe("cancelled");
    expect(await rows(stub)).toHaveLength(1);
  });

  it("returns the live job holding a dedupe key, and frees the key once that job is terminal", async () => {
    const { home, stub } = await freshScope();
    const [a] = await put(stub, [newJob(home, { dedupeKey: "k" })]);
    const [b] = await put(stub, [newJob(home, { dedupeKey: "k" })]);
    expect(b).toMatchObject({ created: false, row: { id: a!.row.id } });
    await scopeRpc(stub).cancel(a!.row.id, null);
    const [c] = await put(stub, [newJob(home, { dedupeKey: "k" })]);
    expect(c!.created).toBe(true);
  });

  it("a 20-way concurrent enqueue with one dedupe key creates one job", async () => {
    const { home, stub } = await freshScope();
    const results = await Promise.all(Array.from({ length: 20 }, () => put(stub, [newJob(home, { dedupeKey: "burst" })])));
    const created = results.flat().filter((r) => r.created);
    expect(created).toHaveLength(1);
    expect(new Set(results.flat().map((r) => r.row.id)).size).toBe(1);
    expect(await rows(stub)).toHaveLength(1);
  });

  it("honours runAt and delayMs", async () => {
    const { home, stub } = await freshScope();
    const [a, b] = await put(stub, [newJob(home, { runAt: T0 + 5000 }), newJob(home, { delayMs: 700 })]);
    expect(a!.row.run_at).toBe(T0 + 5000);
    expect(b!.row.run_at).toBe(T0 + 700);
  });

  it("a batch is one transaction: a failure inside it leaves nothing behind", async () => {
    const { home, stub } = await freshScope();
    // The coordinator never sends a null priority; force the NOT NULL constraint to fail mid-batch.
    const bad = { ...newJob(home), priority: null } as unknown as NewJob;
    const error = await runInDurableObject(stub, (o: ScopeDO) => {
      try {
        enqueueJobs(o.store, [newJob(home), bad], T0);
        return null;
      } catch (e) {
        return String(e);
      }
    });
    expect(error).toMatch(/NOT NULL constraint failed: job.priority/);
    expect(await rows(stub)).toHaveLength(0);
  });
});

describe("a batch larger than one SQL string", () => {
  it("goes in parts under 2 MB (json-chunks.ts), each job created once and in batch order", async () => {
    const { home, stub } = await freshScope();
    const big = "x".repeat(8_000);
    const jobs = Array.from({ length: 300 }, (_, i) => newJob(home, { id: `big-${i}`, payload: JSON.stringify({ i, big }) }));
    const results = await put(stub, jobs);
    expect(results.every((r) => r.created)).toBe(true);
    const seqs = results.map((r) => r.row.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(300);
    // 2.4 MB of payloads: parts of at most 600,000 characters.
    expect(jsonChunks(jobs, (j) => j.payload.length).map((p) => p.length)).toEqual([74, 74, 74, 74, 4]);
  });
});
