/**
 * edgequeue/worker against the real coordinator (the worker only needs a
 * fetch: here the coordinator's own, in the test runtime): runOnce, lease
 * renewal by heartbeats, a lost lease aborting the handler and silencing the
 * worker, and stop() releasing what it had to abort.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { JobAbortedError, RetryableJobError } from "../../src/runtime/errors";
import type { JobContext } from "../../src/runtime/context";
import { createWorker, type WorkerOptions } from "../../src/pull-worker";
import { api, TOKEN, uniqueType, waitForJob } from "../helpers/api";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

function worker(types: string[], handlers: WorkerOptions["handlers"], more: Partial<WorkerOptions> = {}) {
  return createWorker({ url: "http://queue.test", token: TOKEN, types, handlers, fetch: fetchCoordinator, log: () => {}, ...more });
}

const enqueue = async (type: string, payload: Record<string, unknown> = {}) => (await api("POST", "/v1/jobs", { type, payload })).body.job.id as string;

describe("createWorker", () => {
  it("runOnce claims what is due and runs it to its end", async () => {
    const type = uniqueType("once");
    const ids = [await enqueue(type, { n: 1 }), await enqueue(type, { n: 2 })];
    const w = worker([type], { [type]: async (p: { n: number }) => ({ doubled: p.n * 2 }) }, { concurrency: 2 });
    expect(await w.runOnce()).toBe(2);
    for (const [i, id] of ids.entries()) expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", attempts: 1, result: { doubled: (i + 1) * 2 } });
  });

  it("completions of one moment go to the queue in one request (POST /v1/jobs/complete)", async () => {
    const type = uniqueType("together");
    const ids = await Promise.all(Array.from({ length: 5 }, (_, n) => enqueue(type, { n })));
    const posts: string[] = [];
    const counting = ((input: string, init?: RequestInit) => {
      if (init?.method === "POST") posts.push(new URL(input).pathname);
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const w = worker([type], { [type]: async () => ({ ok: true }) }, { concurrency: 5, fetch: counting });
    expect(await w.runOnce()).toBe(5);
    for (const id of ids) expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("completed");
    expect(posts).toEqual(["/v1/claim", "/v1/jobs/complete"]);
  });

  it("a busy worker's completions ride with its next claim: one request per cycle, no POST /v1/jobs/complete", async () => {
    const type = uniqueType("carried");
    const ids = (await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 15 }, (_, n) => ({ type, payload: { n } })) })).body.results.map((x: { id: string }) => x.id as string);
    const claims: { complete?: unknown[] }[] = [];
    const posts: string[] = [];
    const counting = ((input: string, init?: RequestInit) => {
      const path = new URL(input).pathname;
      if (init?.method === "POST") posts.push(path);
      if (path === "/v1/claim") claims.push(JSON.parse(String(init!.body)));
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const w = worker([type], { [type]: async (p: { n: number }) => ({ n: p.n }) }, { concurrency: 5, fetch: counting, waitMs: 1_000 });
    const started = w.start();
    for (const id of ids) await waitForJob(id, (j) => j.state === "completed");
    await w.stop();
    await started;
    expect(posts.filter((p) => p === "/v1/jobs/complete")).toEqual([]);
    // Every completion went with a claim, and each claim carried every slot that freed with it.
    expect(claims.reduce((n, c) => n + (c.complete?.length ?? 0), 0)).toBe(15);
    expect(claims.filter((c) => c.complete).length).toBeLessThan(15);
    for (const [n, id] of ids.entries()) expect((await api("GET", `/v1/jobs/${id}`)).body.job.result).toEqual({ n });
  });

  it("a claim carrying completions that fails: the completions go again alone, and the worker goes on", async () => {
    const type = uniqueType("carried-lost");
    const ids = (await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 8 }, (_, n) => ({ type, payload: { n } })) })).body.results.map((x: { id: string }) => x.id as string);
    let failed = 0;
    const flaky = ((input: string, init?: RequestInit) => {
      if (new URL(input).pathname === "/v1/claim" && String(init?.body).includes('"complete"') && failed++ === 0) return Promise.reject(new TypeError("injected: network lost"));
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const w = worker([type], { [type]: async () => ({ ok: true }) }, { concurrency: 4, fetch: flaky, waitMs: 1_000 });
    const started = w.start();
    // Leases are 30 s: a completion lost with the failed claim would leave its job running past this wait.
    for (const id of ids) await waitForJob(id, (j) => j.state === "completed");
    await w.stop();
    await started;
    expect(failed).toBeGreaterThan(1);
  });

  it("stop() while a claim carrying completions is on its way: those land, and what it leased goes back unstarted", async () => {
    const type = uniqueType("carried-stop");
    const ids = (await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 12 }, (_, n) => ({ type, payload: { n } })) })).body.results.map((x: { id: string }) => x.id as string);
    // The first claim that carries completions is held back 300 ms on its way: stop() is called meanwhile.
    let carrying: (() => void) | null = null;
    const onItsWay = new Promise<void>((resolve) => (carrying = resolve));
    const slow = ((input: string, init?: RequestInit) => {
      if (new URL(input).pathname === "/v1/claim" && String(init?.body).includes('"complete"') && carrying) {
        carrying();
        carrying = null;
        return new Promise((r) => setTimeout(r, 300)).then(() => fetchCoordinator(input, init));
      }
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    let stopping = false;
    let startedAfterStop = 0;
    const w = worker([type], { [type]: async () => ((startedAfterStop += stopping ? 1 : 0), { ok: true }) }, { concurrency: 4, fetch: slow, waitMs: 1_000 });
    const started = w.start();
    await onItsWay;
    stopping = true;
    await w.stop({ timeoutMs: 5_000 });
    const states = await Promise.all(ids.map(async (id: string) => (await api("GET", `/v1/jobs/${id}`)).body.job as { state: string; attempts: number }));
    await started;
    expect(startedAfterStop).toBe(0);
    expect(states.filter((j) => j.state === "completed").length).toBe(4);
    expect(states.filter((j) => j.state !== "completed").map((j) => [j.state, j.attempts])).toEqual(Array.from({ length: 8 }, () => ["pending", 0]));
  });

  it("ctx.log lines are kept with the job: a completion carries them, any other settle sends them first; a job that logs nothing sends none", async () => {
    const type = uniqueType("logs");
    const [loud, failing, quiet] = [await enqueue(type, { mode: "loud" }), await enqueue(type, { mode: "fail" }), await enqueue(type, { mode: "quiet" })];
    const posts: string[] = [];
    const counting = ((input: string, init?: RequestInit) => {
      if (init?.method === "POST") posts.push(new URL(input).pathname);
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const handler = async (p: { mode: string }, ctx: JobContext) => {
      if (p.mode !== "quiet") ctx.log("working", { step: 1 });
      if (p.mode === "fail") throw new Error("boom");
      return { ok: true };
    };
    const w = worker([type], { [type]: handler }, { concurrency: 3, fetch: counting });
    expect(await w.runOnce()).toBe(3);
    const line = { at: expect.any(Number), attempt: 1, message: "working", fields: { step: 1 } };
    expect((await api("GET", `/v1/jobs/${loud}`)).body.job.state).toBe("completed");
    expect((await api("GET", `/v1/jobs/${loud}/logs`)).body.items).toEqual([line]);
    expect((await api("GET", `/v1/jobs/${failing}/logs`)).body.items).toEqual([line]);
    expect((await api("GET", `/v1/jobs/${quiet}/logs`)).body.items).toEqual([]);
    expect(posts.filter((p) => p.endsWith("/logs"))).toEqual([`/v1/jobs/${failing}/logs`]);
  });

  it("renews the lease by itself: a handler running for 2.5 leases keeps its job", async () => {
    const type = uniqueType("long");
    const id = await enqueue(type);
    const w = worker([type], { [type]: async () => new Promise((r) => setTimeout(() => r({ ok: true }), 2_500)) }, { leaseMs: 1_000 });
    expect(await w.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("a job paused mid-step ends its attempt after that step, unspent; resumed, it replays it and runs the rest", async () => {
    const type = uniqueType("paused");
    const id = await enqueue(type);
    const ran: string[] = [];
    let entered!: () => void;
    const inStep = new Promise<void>((r) => (entered = r));
    let goOn!: () => void;
    const held = new Promise<void>((r) => (goOn = r));
    const handler = async (_p: unknown, ctx: JobContext) => {
      const a = await ctx.step("a", async () => (ran.push("a"), entered(), await held, 1));
      return { b: await ctx.step("b", () => (ran.push("b"), a + 1)) };
    };
    const w = worker([type], { [type]: handler });
    const run = w.runOnce();
    await inStep;
    expect((await api("POST", `/v1/jobs/${id}/pause`, {})).body.job).toMatchObject({ state: "running", waitingFor: [{ kind: "pause" }] });
    goOn();
    expect(await run).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "waiting", attempts: 0, lastError: null, waitingFor: [{ kind: "pause" }] });
    expect(ran).toEqual(["a"]);
    await api("POST", `/v1/jobs/${id}/resume`, {});
    await vi.waitFor(async () => expect(await w.runOnce()).toBe(1), { timeout: 10_000, interval: 50 });
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: { b: 2 } });
    expect(ran).toEqual(["a", "b"]);
  });

  it("a lost lease aborts the handler's signal, and the worker writes nothing more for that job", async () => {
    const type = uniqueType("lost");
    const id = await enqueue(type);
    let reason: unknown = null;
    const w = worker(
      [type],
      {
        [type]: async (_p: object, ctx: JobContext) => {
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
          reason = (ctx.signal.reason as JobAbortedError).reason;
          return { finishedAnyway: true }; // not written: the worker holds no lease any more
        },
      },
      { leaseMs: 1_000 },
    );
    const ran = w.runOnce();
    await waitForJob(id, (j) => j.state === "running");
    expect((await api("POST", `/v1/jobs/${id}/cancel`, {})).status).toBe(200);
    expect(await ran).toBe(1);
    expect(reason).toBe("lease_lost");
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "cancelled", result: null });
  });

  it("heartbeats that cannot reach the queue: the handler is aborted (lease_lost) before another worker can claim its job, and writes nothing more", async () => {
    const type = uniqueType("cut-off");
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, backoff: { kind: "fixed", baseMs: 10 } })).body.job.id as string;
    const order: string[] = [];
    const writes: string[] = [];
    // Worker a's claim gets through; then it is cut off from the queue: every heartbeat fails on the way.
    const cutOff = ((input: string, init?: RequestInit) => {
      const path = new URL(input).pathname;
      if (path.endsWith("/heartbeat")) return Promise.reject(new TypeError("injected: network lost"));
      if (path !== "/v1/claim") writes.push(path);
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const a = worker([type], {
      [type]: async (_p: object, ctx: JobContext) => {
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener("abort", () => resolve());
          setTimeout(resolve, 4_000);
        });
        order.push(ctx.signal.aborted ? `a aborted: ${(ctx.signal.reason as JobAbortedError).reason}` : "a ran on");
        await new Promise((r) => setTimeout(r, 500)); // and still returns a result, late
        return { from: "a" };
      },
    }, { leaseMs: 1_000, fetch: cutOff });
    const ran = a.runOnce();
    await waitForJob(id, (j) => j.state === "running");
    // Worker b claims the job the moment the queue lets it (once a's lease has expired by the queue's clock).
    const b = worker([type], { [type]: async () => (order.push("b started"), { from: "b" }) });
    while ((await b.runOnce()) === 0) await new Promise((r) => setTimeout(r, 50));
    await ran;
    expect(order).toEqual(["a aborted: lease_lost", "b started"]);
    expect(writes).toEqual([]);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", attempts: 2, result: { from: "b" } });
  });

  it("stop() past its deadline aborts the handler with reason shutdown and releases the job, its attempt not counted", async () => {
    const type = uniqueType("stop");
    const id = await enqueue(type);
    let reason: unknown = null;
    const w = worker([type], {
      [type]: async (_p: object, ctx: JobContext) => {
        ctx.signal.addEventListener("abort", () => (reason = (ctx.signal.reason as JobAbortedError).reason));
        await new Promise((r) => setTimeout(r, 1_500)); // ignores the signal: the release comes first
        return { late: true };
      },
    }, { waitMs: 1_000 });
    const stopped = w.start();
    await waitForJob(id, (j) => j.state === "running");
    await w.stop({ timeoutMs: 100 });
    expect(reason).toBe("shutdown");
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "pending", attempts: 0, result: null });
    // start() resolves once the handler has returned too; its late answer was not written.
    await stopped;
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "pending", result: null });
  });

  it("a guarded pulled type: a worker of concurrency 4 runs at most the type's concurrency (2) at once, and drains the rest as slots free", async () => {
    const type = "pull.worker.limited"; // concurrency = 2 (vitest.config.mts)
    const ids = await Promise.all(Array.from({ length: 6 }, (_, n) => enqueue(type, { n })));
    let running = 0;
    let most = 0;
    const w = worker([type], {
      [type]: async () => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 100));
        running--;
        return { ok: true };
      },
    }, { concurrency: 4, waitMs: 1_000 });
    const stopped = w.start();
    for (const id of ids) expect((await waitForJob(id, (j) => j.state === "completed" || j.state === "failed")).state).toBe("completed");
    await w.stop({ timeoutMs: 1_000 });
    await stopped;
    expect(most).toBe(2);
  });
});

describe("createWorker, told what is wrong", () => {
  it("a wrong token: start() rejects with what to fix, after one request, instead of retrying forever", async () => {
    const asked: string[] = [];
    const counting = ((input: string, init?: RequestInit) => {
      asked.push(`${init?.method} ${new URL(input).pathname}`);
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const w = worker([uniqueType("denied")], {}, { token: "wrong-token", fetch: counting });
    await expect(w.start()).rejects.toThrow("edgequeue worker: the queue at http://queue.test refused the token (401 unauthorized): check the token (QUEUE_TOKEN) and the URL");
    expect(asked).toEqual(["GET /v1/types"]);
  });

  it("a type the queue neither declares nor has seen is logged at start, with the nearest names", async () => {
    const lines: Record<string, unknown>[] = [];
    const w = worker(["pull.limitd"], {}, { log: (l) => lines.push(l), waitMs: 0 });
    const started = w.start();
    await vi.waitFor(() => expect(lines.some((l) => l.event === "worker:unknown_type")).toBe(true));
    await w.stop();
    await started;
    const said = lines.find((l) => l.event === "worker:unknown_type") as { type: string; suggestions: string[]; message: string };
    expect(said.type).toBe("pull.limitd");
    expect(said.suggestions[0]).toBe("pull.limited");
    expect(said.message).toMatch(/^the queue neither declares nor has seen "pull.limitd"; did you mean "pull.limited"/);
  });

  it("onError hears each attempt that ends in an error, retried or failed; renewEveryMs: false sends no heartbeat", async () => {
    const type = uniqueType("onerror");
    const id = await enqueue(type);
    const heard: [string, string, string][] = [];
    const posts: string[] = [];
    const counting = ((input: string, init?: RequestInit) => {
      if (init?.method === "POST") posts.push(new URL(input).pathname.replace(id, "{id}"));
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    const w = worker(
      [type],
      {
        [type]: async () => {
          await new Promise((r) => setTimeout(r, 300));
          throw new Error("upstream down");
        },
      },
      { fetch: counting, leaseMs: 1_000, renewEveryMs: false, onError: (error, job, kind) => heard.push([error, job.id, kind]) },
    );
    expect(await w.runOnce()).toBe(1);
    expect(heard).toEqual([["upstream down", id, "retry"]]);
    expect(posts).toEqual(["/v1/claim", "/v1/jobs/{id}/fail"]);
  });

  it("ctx.heartbeat() renews the lease from the handler (renewEveryMs: false), and rejects once the attempt is over", async () => {
    const type = uniqueType("beat");
    const id = await enqueue(type);
    const posts: string[] = [];
    const counting = ((input: string, init?: RequestInit) => {
      if (init?.method === "POST") posts.push(new URL(input).pathname.replace(id, "{id}"));
      return fetchCoordinator(input, init);
    }) as typeof fetch;
    let afterCancel = "";
    const w = worker(
      [type],
      {
        [type]: async (_p: object, ctx: JobContext) => {
          await ctx.heartbeat();
          await api("POST", `/v1/jobs/${ctx.id}/cancel`, {});
          await ctx.heartbeat().catch((e: Error) => (afterCancel = `${e.name}: ${(e as JobAbortedError).reason}`));
          return { ok: true };
        },
      },
      { fetch: counting, renewEveryMs: false },
    );
    expect(await w.runOnce()).toBe(1);
    expect(posts.slice(0, 3)).toEqual(["/v1/claim", "/v1/jobs/{id}/heartbeat", "/v1/jobs/{id}/heartbeat"]);
    expect(afterCancel).toMatch(/^JobAbortedError: (lease_lost|cancelled)$/);
  });

  it("each attempt's end names the code version that ran it (`version`), in the job and its timeline", async () => {
    const type = uniqueType("versioned");
    // Its backoff is none: attempt 1 on the old worker fails and is due again at once; attempt 2, on the new one, completes.
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, backoff: { kind: "fixed", baseMs: 0 } })).body.job.id as string;
    const before = worker([type], { [type]: async () => { throw new RetryableJobError("old code"); } }, { version: "v1" });
    expect(await before.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "pending", codeVersion: "v1" });
    const after = worker([type], { [type]: async () => ({ ok: true }) }, { version: "v2" });
    expect(await after.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", codeVersion: "v2" });
    const steps = (await api("GET", `/v1/jobs/${id}/timeline`)).body.steps as { state: string; attempt: number; version?: string | null }[];
    expect(steps.map((s) => `${s.state}:${s.attempt}${s.version ? `@${s.version}` : ""}`)).toEqual(["pending:0", "running:1", "pending:1@v1", "running:2", "completed:2@v2"]);
    expect(() => worker([type], {}, { version: "" })).toThrow(/version must be a string of 1-100 characters/);
  });
});
