/**
 * Inline claims: claimOrEnqueue leases the job to the caller when no job of
 * its key runs, else queues it as the key's follower; runClaimed completes it
 * and drains the followers — over RPC and HTTP alike (docs/producers.md "Inline claims").
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createClient, createHttpClient, type QueueBinding } from "../../src/sdk";
import { createWorker } from "../../src/pull-worker";
import { api, flushJobs, TOKEN, uniqueScope, uniqueType, waitForJob } from "../helpers/api";

const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue);
const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;
const http = createHttpClient("http://queue.test/", TOKEN, { fetch: (input, init) => (exports as unknown as { default: Fetcher }).default.fetch(input, init) });

describe.each([
  ["rpc", rpc],
  ["http", http],
])("claimOrEnqueue / runClaimed (%s)", (_name, queue) => {
  it("runs inline when the key is free, queues one follower while it runs, and drains it after", async () => {
    const type = uniqueType("inline");
    const scope = uniqueScope("inline");
    const handle = await queue.claimOrEnqueue({ type, payload: { n: 1 }, scope, dedupeKey: "acct-1" });
    expect(handle).toMatchObject({ state: "running", attempts: 1, payload: { n: 1 } });
    const ran: number[] = [];
    const result = await queue.runClaimed(handle!, async (job) => {
      ran.push(job.payload.n as number);
      // Requests for the same key while it runs: one follower; the next request joins it.
      if (job.payload.n === 1) {
        expect(await queue.claimOrEnqueue({ type, payload: { n: 2 }, scope, dedupeKey: "acct-1" })).toBeNull();
        expect(await queue.claimOrEnqueue({ type, payload: { n: 3 }, scope, dedupeKey: "acct-1" })).toBeNull();
      }
      return { n: job.payload.n as number };
    });
    expect(result).toEqual({ n: 1 });
    expect(ran).toEqual([1, 2]);
    const jobs = (await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}`)).body.items;
    expect(jobs.map((j: { state: string; result: unknown }) => [j.state, j.result])).toEqual([
      ["completed", { n: 1 }],
      ["completed", { n: 2 }],
    ]);
  });

  it("a failure with a follower pending supersedes the failed job, runs the follower, and throws", async () => {
    const type = uniqueType("inline-fail");
    const scope = uniqueScope("inline-fail");
    const handle = await queue.claimOrEnqueue({ type, payload: { n: 1 }, scope, dedupeKey: "k" });
    const ran: number[] = [];
    await expect(
      queue.runClaimed(handle!, async (job) => {
        ran.push(job.payload.n as number);
        if (job.payload.n === 1) {
          await queue.claimOrEnqueue({ type, payload: { n: 2 }, scope, dedupeKey: "k" });
          throw new Error("the first one broke");
        }
        return {};
      }),
    ).rejects.toThrow("the first one broke");
    expect(ran).toEqual([1, 2]);
    const first = (await api("GET", `/v1/jobs/${handle!.id}`)).body.job;
    expect(first.state).toBe("superseded");
    expect(first.cancelReason).toMatch(/^superseded by /);
  });

  it("a failure with no follower is retried after its backoff, not run again at once", async () => {
    const type = uniqueType("inline-retry");
    const scope = uniqueScope("inline-retry");
    const handle = await queue.claimOrEnqueue({ type, payload: {}, scope, dedupeKey: "k", maxAttempts: 3 });
    let runs = 0;
    await expect(
      queue.runClaimed(handle!, async () => {
        runs++;
        throw new Error("transient");
      }),
    ).rejects.toThrow("transient");
    expect(runs).toBe(1);
    expect((await api("GET", `/v1/jobs/${handle!.id}`)).body.job).toMatchObject({ state: "pending", attempts: 1, lastError: "transient" });
  });

  it("fn gets a handler's context: a step is journaled, a wait ends the attempt holding nothing, and a pull worker's next attempt replays both", async () => {
    const type = uniqueType("inline-wait");
    const scope = uniqueScope("inline-wait");
    let stepRuns = 0;
    const body = async (ctx: { step: (n: string, f: () => number) => Promise<number>; waitForSignal: (n: string) => Promise<{ data: unknown } | null>; log: (m: string) => void }) => {
      const a = await ctx.step("count", () => ++stepRuns);
      ctx.log("before the wait");
      const go = await ctx.waitForSignal("go");
      return { a, go: go?.data ?? null };
    };
    const handle = await queue.claimOrEnqueue({ type, payload: {}, scope, dedupeKey: "w" });
    expect(await queue.runClaimed(handle!, async (_job, ctx) => body(ctx))).toBeUndefined();
    const waiting = (await api("GET", `/v1/jobs/${handle!.id}`)).body.job;
    expect(waiting).toMatchObject({ state: "waiting", attempts: 0, waitingFor: [{ kind: "signal", name: "go" }] });
    expect(waiting.leaseExpiresAt).toBeUndefined();
    // Its ctx.log line is kept with the job, as a worker's is.
    expect((await api("GET", `/v1/jobs/${handle!.id}/logs`)).body.items).toEqual([expect.objectContaining({ attempt: 1, message: "before the wait" })]);
    // The key is held by the waiting job: a request for it now waits as its follower.
    expect(await queue.claimOrEnqueue({ type, payload: {}, scope, dedupeKey: "w" })).toBeNull();
    expect(await queue.signal(handle!.id, "go", { ok: 1 })).toMatchObject({ delivered: "resumed" });
    await flushJobs(handle!.id);
    const worker = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], handlers: { [type]: (_p: unknown, ctx: any) => body(ctx) }, fetch: fetchCoordinator, log: () => {} });
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    await worker.stop();
    expect((await api("GET", `/v1/jobs/${handle!.id}`)).body.job).toMatchObject({ state: "completed", result: { a: 1, go: { ok: 1 } } });
    expect(stepRuns).toBe(1);
  });

  it("fn's ctx.invoke enqueues a child once; its end makes the job due, and the key's next inline claim replays it with its journal", async () => {
    const type = uniqueType("inline-invoke");
    const scope = uniqueScope("inline-invoke");
    const handle = await queue.claimOrEnqueue({ type, payload: {}, scope, dedupeKey: "i" });
    const fn = async (_job: unknown, ctx: { invoke: (n: string, r: object) => Promise<unknown> }) => ({ echoed: await ctx.invoke("echo", { type: "demo.echo", payload: { hi: 1 } }) });
    expect(await queue.runClaimed(handle!, fn as never)).toBeUndefined();
    await waitForJob(handle!.id, (j) => j.state === "pending");
    // The next request for the key: it waits as a follower, and the job back from its wait is leased to run now.
    const again = await queue.claimOrEnqueue({ type, payload: {}, scope, dedupeKey: "i" });
    expect(again).toMatchObject({ id: handle!.id, journal: { entries: [expect.objectContaining({ kind: "invoke", name: "echo" })] } });
    expect(await queue.runClaimed(again!, fn as never, { maxDrains: 0 })).toEqual({ echoed: { hi: 1 } });
    expect((await api("GET", `/v1/jobs/${handle!.id}`)).body.job).toMatchObject({ state: "completed", result: { echoed: { hi: 1 } } });
    expect((await api("GET", `/v1/jobs/${handle!.id}/children`)).body.children).toHaveLength(1);
  });

  it("refuses a pushed type, a guarded type and a missing key, naming the field", async () => {
    const pushed = await api("POST", "/v1/jobs/claim-or-enqueue", { job: { type: "demo.echo", payload: {}, dedupeKey: "k" }, worker: "w" });
    expect([pushed.status, pushed.body.error.details[0].path]).toEqual([400, "job.type"]);
    // A guarded pulled type takes permits before it leases, which the one-transaction inline claim cannot wait for.
    const guarded = await api("POST", "/v1/jobs/claim-or-enqueue", { job: { type: "pull.limited", payload: {}, dedupeKey: "k" }, worker: "w" });
    expect([guarded.status, guarded.body.error.details[0].path]).toEqual([400, "job.type"]);
    expect(guarded.body.error.message).toContain("claim it with a worker");
    const keyless = await api("POST", "/v1/jobs/claim-or-enqueue", { job: { type: "x.y", payload: {} }, worker: "w" });
    expect([keyless.status, keyless.body.error.details[0].path]).toEqual([400, "job.dedupeKey"]);
  });
});
