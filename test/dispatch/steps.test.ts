/**
 * Durable steps end to end: pushed handlers (the example handler's demo
 * types and the test handler's `test.steps` modes) journal each step in the
 * job's own object; a retry replays them; a sleep gives the job back; the
 * journal is fenced by the lease, capped, and deleted with its job. Pull
 * workers journal over HTTP with the same rules.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { homeOfJobId } from "../../src/job/home";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, flushJobs, isTerminal, uniqueScope, uniqueType, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";
import { env } from "../helpers/scope";

async function enqueue(type: string, payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const r = await api("POST", "/v1/jobs", { type, payload, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job as { id: string };
}

const steps = async (id: string) => (await api("GET", `/v1/jobs/${id}/steps`)).body.items as { name: string; seq: number; kind: string; result: unknown; attempt: number; wakeAt: number | null }[];

describe("a retried job resumes after its last journaled step", () => {
  it("demo.steps failing after charge: the retry runs only ship", async () => {
    const job = await enqueue("demo.steps", { failAfter: "charge" });
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ state: "completed", attempts: 2, result: { reserve: 1, charge: 1, ship: 2 } });
    expect((await steps(job.id)).map((s) => [s.seq, s.name, s.result, s.attempt])).toEqual([
      [0, "reserve", 1, 1],
      [1, "charge", 1, 1],
      [2, "ship", 2, 2],
    ]);
  });

  it("a step whose name changed under the job fails it for good with NondeterminismError", async () => {
    const job = await enqueue("demo.diverge");
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ state: "failed", failureKind: "nondeterminism", attempts: 2 });
    expect(done.lastError).toMatch(/^NondeterminismError: step 1 is step "second-on-attempt-1" in the journal, but the code now calls step "second-on-attempt-2"/);
  });

  it("steps called together journal in the order of the calls, whatever order they finish in", async () => {
    const job = await enqueue("test.steps", { mode: "parallel" });
    const done = await waitForJob(job.id, isTerminal);
    expect(done.result).toEqual({ finished: ["c", "b", "a"] });
    expect((await steps(job.id)).map((s) => [s.seq, s.name])).toEqual([
      [0, "a"],
      [1, "b"],
      [2, "c"],
    ]);
  });

  it("each step gets <job id>:<name> as its idempotency key unless it names one; now() and uuid() hold across attempts", async () => {
    const job = await enqueue("test.steps", { mode: "keys" });
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ state: "completed", attempts: 2 });
    expect(done.result.keys).toEqual([`${job.id}:default`, "order-42-charge"]);
    // Attempt 2 sees the now() and uuid() attempt 1 saw (and journaled).
    expect(done.result.now).toBe(done.result.seen.now);
    expect(done.result.uuid).toBe(done.result.seen.uuid);
    expect(done.result.uuid).not.toBe(done.result.other);
    expect(done.result.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("at most once", () => {
  it("a step that started and never journaled is not run again: the job fails naming it, and resolving it resumes the job", async () => {
    const job = await enqueue("test.steps", { mode: "at-most-once" });
    const failed = await waitForJob(job.id, isTerminal);
    expect(failed).toMatchObject({ state: "failed", failureKind: "fatal", attempts: 2 });
    expect(failed.lastError).toMatch(/step "charge" is atMostOnce: it started in attempt 1 and never journaled a result/);
    expect(await probe.stepRuns(job.id)).toEqual({ charge: 1 });
    expect((await steps(job.id))[0]).toMatchObject({ name: "charge", result: null, attempt: 1 });

    // The operator checked the payment provider: it was charged.
    const resolved = await api("POST", `/v1/jobs/${job.id}/steps/charge/resolve`, { result: { charged: true, by: "operator" } });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    const done = await waitForJob(job.id, (j) => j.state === "completed");
    expect(done.result).toEqual({ charge: { charged: true, by: "operator" } });
    expect(await probe.stepRuns(job.id)).toEqual({ charge: 1 });
  });

  it("a retry without resolving runs the step again", async () => {
    const job = await enqueue("test.steps", { mode: "at-most-once" });
    await waitForJob(job.id, (j) => j.state === "failed");
    expect((await api("POST", `/v1/jobs/${job.id}/retry`)).status).toBe(200);
    const done = await waitForJob(job.id, (j) => j.state === "completed");
    expect(done.result.charge).toMatchObject({ charged: true });
    expect(await probe.stepRuns(job.id)).toEqual({ charge: 2 });
  });

  it("resolve refuses a step that is not unfinished, and an unknown job", async () => {
    const job = await enqueue("demo.steps");
    await waitForJob(job.id, isTerminal);
    expect((await api("POST", `/v1/jobs/${job.id}/steps/charge/resolve`, { result: 1 })).body.error.code).toBe("already_terminal");
    expect((await api("POST", `/v1/jobs/${job.id}x/steps/charge/resolve`, { result: 1 })).status).toBe(404);
    expect((await api("POST", `/v1/jobs/${job.id}/steps/charge/resolve`, {})).body.error.details[0].path).toBe("result");
  });
});

describe("durable sleep", () => {
  it("demo.nap gives the job back while it sleeps (no attempt spent), then completes; the timeline shows the sleep", async () => {
    const job = await enqueue("demo.nap", { ms: 400 });
    const asleep = await waitForJob(job.id, (j) => j.state === "pending" && j.runAt > j.createdAt);
    expect(asleep.attempts).toBe(0);
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ state: "completed", attempts: 1 });
    expect(done.result.sleptMs).toBeGreaterThanOrEqual(400);
    expect((await steps(job.id)).map((s) => [s.name, s.kind])).toEqual([
      ["before-nap", "step"],
      ["nap", "sleep"],
    ]);
    const timeline = (await api("GET", `/v1/jobs/${job.id}/timeline`)).body.steps as { state: string; note: string | null }[];
    expect(timeline.some((s) => s.state === "pending" && /^sleep "nap" until /.test(s.note ?? ""))).toBe(true);
  });

  it("cancelling a sleeping job ends it", async () => {
    const job = await enqueue("demo.nap", { ms: 60_000 });
    await waitForJob(job.id, (j) => j.state === "pending" && j.runAt > j.createdAt + 30_000);
    expect((await api("POST", `/v1/jobs/${job.id}/cancel`, {})).body.job.state).toBe("cancelled");
  });
});

describe("the journal is fenced, capped and deleted with its job", () => {
  it("a deposed attempt cannot append: a step that finishes after its job was cancelled journals nothing", async () => {
    const job = await enqueue("test.steps", { mode: "deposed" });
    await vi.waitFor(async () => expect(await probe.stepRuns(job.id)).toEqual({ slow: 1 }), { timeout: 5_000, interval: 20 });
    expect((await api("POST", `/v1/jobs/${job.id}/cancel`, {})).status).toBe(200);
    await env.SCOPE.getByName(homeOfJobId(job.id)!.name).drain();
    expect(await steps(job.id)).toEqual([]);
    expect((await api("GET", `/v1/jobs/${job.id}`)).body.job.state).toBe("cancelled");
  });

  it("a step result over the payload limit fails the job, naming the limit", async () => {
    const done = await waitForJob((await enqueue("test.steps", { mode: "big-result" })).id, isTerminal);
    expect(done).toMatchObject({ state: "failed", failureKind: "fatal" });
    expect(done.lastError).toMatch(/step "huge": its result is larger than 131072 bytes of JSON \(limits\.payloadMaxBytes\)/);
  });

  it("a journal past its cap fails the job with journal_too_large", async () => {
    const job = await enqueue("test.steps", { mode: "journal-cap" });
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ state: "failed", failureKind: "fatal" });
    expect(done.lastError).toMatch(/^journal_too_large: step "chunk-10" would take the job's journal past 1048576 bytes/);
    expect(await steps(job.id)).toHaveLength(10);
  });

  it("a pushed job whose object is reset mid-step resumes without repeating the finished step", async () => {
    const job = await enqueue("test.steps", { mode: "reset" }, { scope: uniqueScope("reset") });
    await vi.waitFor(async () => expect(await probe.stepRuns(job.id)).toMatchObject({ a: 1, b: 1 }), { timeout: 5_000, interval: 10 });
    await abortAllDurableObjects();
    const done = await waitForJob(job.id, isTerminal, 15_000);
    // The restarted object gave the orphaned attempt back uncounted, so b ran again in attempt 1; a did not run again.
    expect(done).toMatchObject({ state: "completed", attempts: 1, result: { a: 1, b: 1 } });
    expect(await probe.stepRuns(job.id)).toEqual({ a: 1, b: 2 });
  });

  it("deleting a job deletes its journal", async () => {
    const job = await enqueue("demo.steps", {}, { scope: uniqueScope("prune") });
    await waitForJob(job.id, isTerminal);
    const stub = env.SCOPE.getByName(homeOfJobId(job.id)!.name);
    // The three steps are in the job's own row (scope/workflow/journal-row.ts), none in job_step.
    const count = () =>
      runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ steps: number; inRow: number | null }>("SELECT (SELECT count(*) FROM job_step) AS steps, (SELECT sum(json_array_length(journal, '$.e')) FROM job) AS inRow").one());
    expect(await count()).toEqual({ steps: 0, inRow: 3 });
    await flushJobs(job.id);
    expect((await api("POST", "/v1/prune", { olderThan: Date.now() + 1 })).body.deleted).toBeGreaterThanOrEqual(1);
    expect(await count()).toEqual({ steps: 0, inRow: null });
  });
});

describe("a sleep the journal cannot take", () => {
  it("fails the job at once, saying why, instead of holding its lease until the reap pass", async () => {
    const type = uniqueType("badsleep");
    const id = (await enqueue(type)).id;
    const [job] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const start = { at: Date.now(), seed: "00112233445566778899aabbccddeeff" };
    expect((await api("POST", `/v1/jobs/${id}/steps`, { leaseToken: job.leaseToken, op: "commit", seq: 0, name: "a", result: 1, startedAt: Date.now(), start })).status).toBe(200);
    const slept = await api("POST", `/v1/jobs/${id}/sleep`, { leaseToken: job.leaseToken, seq: 0, name: "b", until: Date.now() + 60_000, startedAt: Date.now(), start });
    expect(slept.status).toBe(200);
    expect(slept.body.job).toMatchObject({ state: "failed", failureKind: "nondeterminism" });
    expect(slept.body.job.lastError).toMatch(/^NondeterminismError: step 0 is "a" in the journal, "b" in the code/);
  });
});

describe("pull workers journal over HTTP", () => {
  it("commit, replay after a failed attempt, sleep, and a stale token refused", async () => {
    const type = uniqueType("pullsteps");
    const id = (await enqueue(type)).id;
    const claim = async () => (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs[0];
    const first = await claim();
    const start = { at: Date.now(), seed: "00112233445566778899aabbccddeeff" };
    const commit = (job: { leaseToken: string }, seq: number, name: string, result: unknown) =>
      api("POST", `/v1/jobs/${id}/steps`, { leaseToken: job.leaseToken, op: "commit", seq, name, result, startedAt: Date.now(), start });
    expect((await commit(first, 0, "reserve", { ok: 1 })).status).toBe(200);
    expect((await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: first.leaseToken, error: "boom", retryAfterMs: 0 })).status).toBe(200);
    // The old attempt is deposed.
    const stale = await commit(first, 1, "charge", {});
    expect([stale.status, stale.body.error.code]).toEqual([409, "lease_lost"]);

    await api("POST", `/v1/jobs/${id}/retry`).catch(() => undefined);
    // Claimable once its object's summary reaches the catalog (told at once, but a loaded machine can take a second).
    const second = await vi.waitFor(
      async () => {
        const j = await claim();
        if (!j) throw new Error("not due yet");
        return j;
      },
      { timeout: 10_000, interval: 20 },
    );
    // A different name at a journaled position is nondeterminism.
    const diverged = await commit(second, 0, "reserve-v2", {});
    expect([diverged.status, diverged.body.error.details.reason]).toEqual([409, "nondeterminism"]);
    const slept = await api("POST", `/v1/jobs/${id}/sleep`, { leaseToken: second.leaseToken, seq: 1, name: "wait", until: Date.now() + 60_000, startedAt: Date.now(), start });
    expect(slept.status, JSON.stringify(slept.body)).toBe(200);
    expect(slept.body.job).toMatchObject({ state: "pending", attempts: 1 });
    expect((await steps(id)).map((s) => [s.name, s.kind, s.result])).toEqual([
      ["reserve", "step", { ok: 1 }],
      ["wait", "sleep", null],
    ]);
    await api("POST", `/v1/jobs/${id}/cancel`, {});
  });
});
