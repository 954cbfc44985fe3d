/**
 * Progress (docs/handlers.md "Progress"): ctx.progress kept on the job (`progress`, `progressAt`), told to the
 * observer as job:progress, coalesced by the SDK; a pull worker's POST /v1/jobs/{id}/progress fenced by its lease,
 * bad values refused naming the field.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createWorker } from "../../src/pull-worker";
import { ProgressReporter } from "../../src/runtime/progress";
import { runJob } from "../../src/testing";
import { api, TOKEN, uniqueType, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

describe("progress", () => {
  it("a pushed handler's reports are kept on the job and told to the observer; the last one before the outcome", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "demo.progress", payload: { steps: 4, ms: 1 } })).body.job.id;
    const job = await waitForJob(id, (j) => j.state === "completed");
    expect(job).toMatchObject({ result: { done: true }, progress: 100, progressAt: expect.any(Number) });
    expect(job.progressAt).toBeLessThanOrEqual(job.finishedAt);
    await vi.waitFor(
      async () => {
        const reports = (await probe.events(id)).filter((e) => e.event === "job:progress") as unknown as { progress: number }[];
        // Four reports 1 ms apart are coalesced (at most one send per 250 ms): the first and the last at least.
        expect(reports.length).toBeGreaterThanOrEqual(2);
        expect(reports.length).toBeLessThanOrEqual(4);
        expect(reports.at(-1)!.progress).toBe(100);
      },
      { timeout: 5_000, interval: 20 },
    );
  });

  it("a pull worker's report is fenced by its lease; a bad value names the field and changes nothing", async () => {
    const type = uniqueType("progress");
    const id = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job.id;
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    for (const [progress, says] of [
      [101, "from 0 to 100"],
      [-1, "from 0 to 100"],
      [[1, 2], "a number from 0 to 100 or a JSON object"],
      ["50", "a number from 0 to 100 or a JSON object"],
      [{ text: "x".repeat(5000) }, "the limit is 4096"],
    ] as const) {
      const bad = await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress });
      expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "progress"]);
      expect(JSON.stringify(bad.body.error)).toContain(says);
    }
    const stale = await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: "0".repeat(32), progress: 5 });
    expect([stale.status, stale.body.error.code]).toEqual([409, "lease_lost"]);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ progress: null, progressAt: null });
    const ok = await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: { rows: 10, of: 40 } });
    expect(ok).toMatchObject({ status: 200, body: { progressAt: expect.any(Number) } });
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ progress: { rows: 10, of: 40 }, progressAt: ok.body.progressAt });
    await api("POST", `/v1/jobs/${id}/complete`, { leaseToken: leased.leaseToken });
    const late = await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: 99 });
    expect([late.status, late.body.error.code]).toEqual([409, "already_terminal"]);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", progress: { rows: 10, of: 40 } });
  });

  it("edgequeue/worker sends ctx.progress under the lease, the last value before it completes", async () => {
    const type = uniqueType("progress-worker");
    const id = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job.id;
    const posts: string[] = [];
    const counting = ((input: string, init?: RequestInit) => {
      if (init?.method === "POST") posts.push(new URL(input).pathname);
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const w = createWorker({
      url: "http://queue.test",
      token: TOKEN,
      types: [type],
      fetch: counting,
      log: () => {},
      handlers: {
        [type]: async (_p: unknown, ctx) => {
          for (let i = 1; i <= 50; i++) void ctx.progress(i * 2);
          return { ok: true };
        },
      },
    });
    expect(await w.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", progress: 100 });
    // Fifty reports in one moment: the first goes at once, the rest coalesce into the last.
    expect(posts.filter((p) => p.endsWith("/progress"))).toEqual([`/v1/jobs/${id}/progress`, `/v1/jobs/${id}/progress`]);
  });

  it("the reporter holds one value, never a queue: a tight loop costs two sends; a bad value throws naming progress", async () => {
    const sent: string[] = [];
    const r = new ProgressReporter(async (json) => void sent.push(json));
    for (let i = 0; i <= 1000; i++) void r.report({ done: i });
    await r.flush();
    expect(sent).toEqual(['{"done":0}', '{"done":1000}']);
    expect(() => r.report(Number.NaN)).toThrow(/ctx\.progress: progress must be a number from 0 to 100/);
    expect(() => r.report({ big: "x".repeat(4097) })).toThrow(/the limit is 4096/);
  });

  it("the test kit records every value reported", async () => {
    const run = await runJob(async (_p: unknown, ctx) => {
      await ctx.progress(10);
      await ctx.progress({ stage: "upload" });
      return {};
    }, {});
    expect(run.progress).toEqual([
      { attempt: 1, value: 10 },
      { attempt: 1, value: { stage: "upload" } },
    ]);
  });
});
