/**
 * Waits end to end (docs/workflows.md): pushed demo types wait for a signal and a wait token through the real
 * handler Worker and the HTTP API, and a pull worker (edgequeue/worker) waits the same way over HTTP — its waits
 * journaled, a signal that raced ahead taken, a token made by the queue.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createWorker } from "../../src/pull-worker";
import { api, flushJobs, isTerminal, TOKEN, uniqueType, waitForJob } from "../helpers/api";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

async function enqueue(type: string, payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const r = await api("POST", "/v1/jobs", { type, payload, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job.id as string;
}

const steps = async (id: string) => (await api("GET", `/v1/jobs/${id}/steps`)).body.items as { name: string; kind: string; result: any }[];

describe("pushed waits", () => {
  it("demo.approve waits in `waiting` (counted, holding no lease) until POST /signals/approve, then completes with its data", async () => {
    const id = await enqueue("demo.approve");
    const waiting = await waitForJob(id, (j) => j.state === "waiting");
    expect(waiting).toMatchObject({ attempts: 0, waitingFor: [{ kind: "signal", name: "approve", until: null }] });
    await flushJobs(id);
    expect((await api("GET", "/v1/stats?type=demo.approve")).body.waiting).toBeGreaterThanOrEqual(1);

    expect(await api("POST", `/v1/jobs/${id}/signals/approve`, { data: { by: "ann" } })).toMatchObject({ status: 202, body: { id, delivered: "resumed" } });
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", attempts: 1, result: { approved: { by: "ann" } } });
    expect(await steps(id)).toEqual([expect.objectContaining({ name: "approve", kind: "signal", result: { data: { by: "ann" } } })]);
    // Finished: a signal now is refused.
    expect(await api("POST", `/v1/jobs/${id}/signals/approve`, {})).toMatchObject({ status: 409, body: { error: { code: "already_terminal" } } });
  });

  it("a signal to a key reaches the live job holding it; unknown jobs and keys are 404, oversized data 413", async () => {
    const key = `order-${crypto.randomUUID()}`;
    const id = await enqueue("demo.approve", {}, { dedupeKey: key });
    await waitForJob(id, (j) => j.state === "waiting");
    const big = "x".repeat(300_000);
    expect((await api("POST", `/v1/jobs/${id}/signals/approve`, { data: big })).status).toBe(413);
    expect(await api("POST", "/v1/signals", { type: "demo.approve", dedupeKey: key, name: "approve", data: true })).toMatchObject({ status: 202, body: { id, delivered: "resumed" } });
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { approved: true } });
    expect((await api("POST", "/v1/signals", { type: "demo.approve", dedupeKey: "no-such-key", name: "approve" })).status).toBe(404);
    expect((await api("POST", `/v1/jobs/${id.slice(0, -2)}zz/signals/approve`, {})).status).toBe(404);
    expect((await api("POST", "/v1/signals", { type: "demo.approve", name: "approve" })).body.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("dedupeKey") });
  });

  it("a waiting job is cancellable", async () => {
    const id = await enqueue("demo.approve");
    await waitForJob(id, (j) => j.state === "waiting");
    expect(await api("POST", `/v1/jobs/${id}/cancel`, { reason: "changed my mind" })).toMatchObject({ status: 200, body: { job: { state: "cancelled", waitingFor: null } } });
  });

  it("demo.token: its token is completed by a POST with no queue token, once; a forged one is 404", async () => {
    const id = await enqueue("demo.token");
    await waitForJob(id, (j) => j.state === "waiting");
    const made = (await steps(id)).find((s) => s.kind === "token")!.result as { id: string; path: string; url: string | null };
    expect(made.path).toBe(`/v1/tokens/${made.id}`);
    expect(made.url).toBeNull();
    const forged = made.path.slice(0, -1) + (made.path.endsWith("A") ? "B" : "A");
    expect((await api("POST", forged, { data: 1 }, null)).status).toBe(404);
    expect((await api("POST", "/v1/tokens/not-a-token", { data: 1 }, null)).status).toBe(404);
    // A page of another origin may complete it: the preflight is answered without the queue's token.
    const preflight = await fetchCoordinator(`http://queue.test${made.path}`, { method: "OPTIONS", headers: { origin: "https://approve.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(await api("POST", made.path, { data: { approved: "yes" } }, null)).toMatchObject({ status: 202, body: { id, delivered: "resumed" } });
    expect((await api("POST", made.path, { data: 2 }, null)).status).toBe(409);
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { data: { approved: "yes" } } });
  });

  it("an expired token is 410, and its wait ended with null at the token's expiry", async () => {
    const id = await enqueue("demo.token", { timeoutMs: 1 });
    // The token expires 1 ms after it is made: the wait that follows has already timed out, and the job completes.
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { data: null } });
    const made = (await steps(id)).find((s) => s.kind === "token")!.result as { path: string };
    expect(await api("POST", made.path, { data: 1 }, null)).toMatchObject({ status: 410, body: { error: { code: "gone" } } });
  });
});

describe("pulled waits (edgequeue/worker)", () => {
  it("a pull worker's wait is journaled over HTTP, takes a signal that raced ahead, and makes a token the queue signs", async () => {
    const type = uniqueType("pull.wait");
    const runs: string[] = [];
    const handlers = {
      [type]: async (_p: unknown, ctx: any) => {
        runs.push(`attempt ${ctx.attempt}`);
        const first = await ctx.waitForSignal("go");
        const token = await ctx.createWaitToken("done");
        const second = await ctx.waitForToken(token);
        return { first: first?.data ?? null, second: second?.data ?? null, path: token.path };
      },
    };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], handlers, fetch: fetchCoordinator, log: () => {} });
    const id = await enqueue(type);
    // Sent before any worker ran the job: kept for its wait.
    expect((await api("POST", `/v1/jobs/${id}/signals/go`, { data: "early" })).body).toEqual({ id, delivered: "kept", waitingFor: null });
    expect(await w.runOnce()).toBe(1);
    // The wait took the kept signal, so the job was due at once; the next run makes the token and waits for it.
    expect(await w.runOnce()).toBe(1);
    const waiting = (await api("GET", `/v1/jobs/${id}`)).body.job;
    expect(waiting).toMatchObject({ state: "waiting", waitingFor: [{ kind: "token", name: "done" }] });
    const made = (await steps(id)).find((s) => s.kind === "token")!.result as { path: string };
    expect((await api("POST", made.path, { data: 42 }, null)).status).toBe(202);
    expect(await w.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: { first: "early", second: 42, path: made.path } });
    expect((await steps(id)).map((s) => [s.kind, s.name])).toEqual([
      ["signal", "go"],
      ["token", "done"],
      ["token_wait", "done"],
    ]);
    await w.stop();
  });
});
