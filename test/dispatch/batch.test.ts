/**
 * Batch handlers (src/runtime/batch.ts; docs/handlers.md "Batch handlers"): a type with `batch = { maxSize,
 * maxWaitMs }` runs up to maxSize due jobs in one call of its function — pushed (gathered for at most maxWaitMs,
 * sent at once when full) and pulled (a claim's jobs) — each job ending as its own entry says, or every job of the
 * call retrying when the function throws.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { batch } from "../../src/handler";
import { createWorker } from "../../src/pull-worker";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, flushJobs, isTerminal, TOKEN, uniqueScope, waitForJob } from "../helpers/api";
import { alarmAt, freshScope, newJob, partsOf, rows, T0 } from "../helpers/scope";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

async function enqueueAll(jobs: object[]): Promise<string[]> {
  const r = await api("POST", "/v1/jobs/batch", { jobs });
  expect(r.status).toBe(200);
  return r.body.results.map((x: { id: string }) => x.id);
}

describe("a batch handler, pushed", () => {
  it("gets the due jobs of one object in one call, up to maxSize", async () => {
    const scope = uniqueScope("batch");
    const ids = await enqueueAll(Array.from({ length: 5 }, () => ({ type: "test.batch", payload: {}, scope })));
    const done = await Promise.all(ids.map((id) => waitForJob(id, isTerminal)));
    expect(done.map((j) => j.state)).toEqual(Array(5).fill("completed"));
    expect(done.map((j) => j.result.batchSize)).toEqual([5, 5, 5, 5, 5]);
    expect(done.map((j) => j.result.index).sort()).toEqual([0, 1, 2, 3, 4]);
    // Seven due at once: a call of five (maxSize) and one of two.
    const more = await enqueueAll(Array.from({ length: 7 }, () => ({ type: "test.batch", payload: {}, scope })));
    const sizes = (await Promise.all(more.map((id) => waitForJob(id, isTerminal)))).map((j) => j.result.batchSize).sort();
    expect(sizes).toEqual([2, 2, 5, 5, 5, 5, 5]);
  });

  it("ends each job as its entry says: an Error fails that job alone (a retry, or for good); a throw retries every job of the call", async () => {
    const scope = uniqueScope("batchf");
    const [ok, failing, fatal] = await enqueueAll([
      { type: "test.batch", payload: {}, scope },
      { type: "test.batch", payload: { fail: true }, scope },
      { type: "test.batch", payload: { fatal: true }, scope },
    ]);
    expect(await waitForJob(ok!, isTerminal)).toMatchObject({ state: "completed", attempts: 1, result: { batchSize: 3 } });
    expect(await waitForJob(failing!, isTerminal)).toMatchObject({ state: "completed", attempts: 2, result: { attempt: 2 } });
    expect(await waitForJob(fatal!, isTerminal)).toMatchObject({ state: "failed", failureKind: "fatal", lastError: "this one, for good" });

    const thrown = await enqueueAll([
      { type: "test.batch", payload: { throw: true }, scope },
      { type: "test.batch", payload: {}, scope },
    ]);
    for (const id of thrown) expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", attempts: 2 });
    const timeline = await api("GET", `/v1/jobs/${thrown[1]}/timeline`);
    expect(JSON.stringify(timeline.body)).toContain("the whole batch failed");
  });

  it("gathers for maxWaitMs: fewer than maxSize due wait for the longest-due job's maxWaitMs; a full batch goes at once", async () => {
    const { home, stub, clock } = await freshScope();
    const idle = () => runInDurableObject(stub, (o: ScopeDO) => partsOf(o).push.dispatcher.idle());
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([newJob(home, { type: "test.batch.gather" }), newJob(home, { type: "test.batch.gather" })]));
    await idle();
    expect((await rows(stub)).map((r) => r.state)).toEqual(["pending", "pending"]);
    // The object wakes when the first has waited maxWaitMs.
    expect(await alarmAt(stub)).toBe(T0 + 1000);
    clock!.advance(400);
    // Two more fill the batch (maxSize 4): it goes at once.
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([newJob(home, { type: "test.batch.gather" }), newJob(home, { type: "test.batch.gather" })]));
    await idle();
    const full = await rows(stub);
    expect(full.map((r) => r.state)).toEqual(Array(4).fill("completed"));
    expect(full.map((r) => JSON.parse(r.result!).batchSize)).toEqual([4, 4, 4, 4]);
    // One alone waits its maxWaitMs, then goes by the alarm.
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([newJob(home, { type: "test.batch.gather" })]));
    await idle();
    expect((await rows(stub))[4]!.state).toBe("pending");
    clock!.advance(1000);
    await runDurableObjectAlarm(stub);
    await idle();
    const last = (await rows(stub))[4]!;
    expect([last.state, JSON.parse(last.result!).batchSize]).toEqual(["completed", 1]);
  });
});

describe("a batch handler with a key", () => {
  it("pushed: a call carries the jobs of one key value", async () => {
    const scope = uniqueScope("bkey");
    const users = ["a", "a", "a", "b", "b", "c"];
    const ids = await enqueueAll(users.map((user) => ({ type: "test.batch.keyed", payload: { user }, scope })));
    const done = await Promise.all(ids.map((id) => waitForJob(id, isTerminal)));
    expect(done.map((j) => [j.payload.user, j.state, j.result.batchSize])).toEqual([
      ["a", "completed", 3],
      ["a", "completed", 3],
      ["a", "completed", 3],
      ["b", "completed", 2],
      ["b", "completed", 2],
      ["c", "completed", 1],
    ]);
    // A job without the key is refused, naming the path.
    const bad = await api("POST", "/v1/jobs", { type: "test.batch.keyed", payload: {}, scope });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "payload.user"]);
  });

  it("pulled: a claim's jobs run one key value per call", async () => {
    const calls: string[][] = [];
    const handlers = {
      "pull.batch.keyed": batch((jobs) => {
        calls.push(jobs.map((j) => (j.payload as { user: string }).user));
        return jobs.map(() => ({}));
      }),
    };
    const scope = uniqueScope("pbkey");
    const ids = await enqueueAll(["x", "y", "x", "y", "x"].map((user) => ({ type: "pull.batch.keyed", payload: { user }, scope })));
    await flushJobs(...ids);
    const worker = createWorker({ url: "http://queue.test", token: TOKEN, types: ["pull.batch.keyed"], concurrency: 10, handlers, fetch: fetchCoordinator, log: () => {} });
    while ((await worker.runOnce()) > 0);
    for (const id of ids) expect((await waitForJob(id, isTerminal)).state).toBe("completed");
    expect(calls.map((c) => c.join("")).sort()).toEqual(["xxx", "yy"]);
  });
});

describe("a batch handler, pulled", () => {
  it("gathers for maxWaitMs too: a claim takes nothing while fewer than maxSize are due and the longest-due waited less", async () => {
    const { home, stub, clock } = await freshScope();
    const claim = () => runInDurableObject(stub, (o: ScopeDO) => o.claim({ worker: "w", types: ["pull.batch.gather"], limit: 10, leaseMs: 30_000 }));
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([newJob(home, { type: "pull.batch.gather" }), newJob(home, { type: "pull.batch.gather" })]));
    expect(await claim()).toEqual([]);
    // The object wakes when the gathering ends (its alarm tells the claims parked meanwhile).
    expect(await alarmAt(stub)).toBe(T0 + 1000);
    clock!.advance(1000);
    expect((await claim()).length).toBe(2);
    // Three due (maxSize) go at once.
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([1, 2, 3].map(() => newJob(home, { type: "pull.batch.gather" }))));
    expect((await claim()).length).toBe(3);
  });

  it("a claim parked while its type gathered is woken when the gathering ends (it would otherwise wait a minute)", async () => {
    const calls: number[] = [];
    const handlers = { "pull.batch.gather": batch((jobs) => void calls.push(jobs.length)) };
    const worker = createWorker({ url: "http://queue.test", token: TOKEN, types: ["pull.batch.gather"], concurrency: 10, waitMs: 60_000, handlers, fetch: fetchCoordinator, log: () => {} });
    const running = worker.start();
    const scope = uniqueScope("pgather");
    const ids = await enqueueAll([1, 2].map(() => ({ type: "pull.batch.gather", payload: {}, scope })));
    for (const id of ids) expect((await waitForJob(id, isTerminal, 20_000)).state).toBe("completed");
    expect(calls).toEqual([2]);
    await worker.stop();
    await running;
  }, 30_000);

  it("runs a claim's jobs in one call (a claim of a batch type takes maxSize at most)", async () => {
    const calls: number[] = [];
    const handlers = {
      "pull.batch": batch((jobs) => {
        calls.push(jobs.length);
        return jobs.map((_, index) => ({ batchSize: jobs.length, index }));
      }),
    };
    const scope = uniqueScope("pbatch");
    const ids = await enqueueAll(Array.from({ length: 7 }, () => ({ type: "pull.batch", payload: {}, scope })));
    await flushJobs(...ids);
    const worker = createWorker({ url: "http://queue.test", token: TOKEN, types: ["pull.batch"], concurrency: 10, handlers, fetch: fetchCoordinator, log: () => {} });
    while ((await worker.runOnce()) > 0);
    const done = await Promise.all(ids.map((id) => waitForJob(id, isTerminal)));
    expect(done.map((j) => j.state)).toEqual(Array(7).fill("completed"));
    // maxSize 3 per claim: three calls of 3, 3 and 1.
    expect(calls).toEqual([3, 3, 1]);
    expect(done.map((j) => j.result.batchSize).sort()).toEqual([1, 3, 3, 3, 3, 3, 3]);
  });
});
