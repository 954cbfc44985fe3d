/**
 * The typed producer clients: over the RPC entrypoint (as a bound Worker uses
 * it) and over HTTP (as Node or a browser does), against the real coordinator.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createClient, createHttpClient, QueueClientError, type QueueBinding } from "../../src/sdk";
import { TOKEN, flushJobs, uniqueScope, uniqueType, waitForJob, isTerminal } from "../helpers/api";

const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue);
const http = createHttpClient("http://queue.test/", TOKEN, {
  fetch: (input, init) => (exports as unknown as { default: Fetcher }).default.fetch(input, init),
});

describe.each([
  ["rpc", rpc],
  ["http", http],
])("createClient / createHttpClient (%s)", (_name, queue) => {
  it("enqueue, get, list, cancel, stats", async () => {
    const type = uniqueType();
    const scope = uniqueScope();
    const { id, job, created } = await queue.enqueue({ type, payload: { to: "a@b.c" }, scope, tags: ["x"] });
    expect(created).toBe(true);
    expect(job).toMatchObject({ id, type, payload: { to: "a@b.c" }, state: "pending" });
    expect((await queue.get(id)).id).toBe(id);
    const many = await queue.enqueueMany([
      { type, payload: { n: 1 }, scope },
      { type, payload: { n: 2 }, scope, dedupeKey: "d" },
    ]);
    expect(many.map((r) => r.created)).toEqual([true, true]);
    expect(many.every((r) => !("job" in r))).toBe(true);
    const views = await queue.enqueueMany([{ type, payload: { n: 2 }, scope, dedupeKey: "d" }], { return: "jobs" });
    expect(views[0]).toMatchObject({ id: many[1]!.id, created: false, job: { id: many[1]!.id, payload: { n: 2 } } });
    const page = await queue.list({ scopeType: scope.type, scopeId: scope.id, limit: 10 });
    expect(page.items).toHaveLength(3);
    expect((await queue.cancel(id, "no longer needed")).state).toBe("cancelled");
    await flushJobs(id);
    expect(await queue.stats(type)).toMatchObject({ pending: 2, cancelled: 1, running: 0 });
    const m = await queue.metrics({ type, minutes: 5 });
    expect(m.types).toEqual([expect.objectContaining({ type, cancelled: 1, totals: expect.objectContaining({ enqueued: 3, cancelled: 1 }) })]);
    expect(await queue.retryFailed({ type, scopeType: scope.type, scopeId: scope.id })).toEqual({ retried: 0, skipped: 0, nextCursor: null });
    const refused = await queue.retryFailed({ scopeType: "Tenant" } as never).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "invalid_request", details: [{ path: "scopeId" }] });
  });

  it("a refusal is a QueueClientError with the API's code", async () => {
    const err = await queue.get("nope").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueClientError);
    expect(err).toMatchObject({ code: "not_found" });
    const bad = await queue.enqueue({ type: "", payload: {} }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "invalid_request", details: [{ path: "type" }] });
  });

  it("a pushed job runs through its handler", async () => {
    const { id } = await queue.enqueue({ type: "demo.echo", payload: { via: _name } });
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { via: _name } });
  });
});

describe("createClient over a binding without entrypoint = \"EdgeQueue\"", () => {
  it("says how to bind the queue instead of the runtime's 'does not implement'", async () => {
    // The coordinator's default entrypoint: its HTTP API, with no RPC methods.
    const wrong = createClient((exports as unknown as { default: Fetcher }).default);
    const err = await wrong.stats().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueClientError);
    expect((err as QueueClientError).message).toMatch(/bind the queue with entrypoint = "EdgeQueue"/);
  });
});

describe("undefined in a payload", () => {
  it.each([
    ["rpc", rpc],
    ["http", http],
  ])("%s: dropped as JSON.stringify drops it, nested too; a value JSON cannot carry is still refused, named", async (_name, client) => {
    const type = uniqueType("undef");
    const { job } = await client.enqueue({ type, payload: { x: undefined, y: 1, nested: { z: undefined, w: [1, undefined] } } as never, priority: undefined });
    expect(job!.payload).toEqual({ y: 1, nested: { w: [1, null] } });
    // Over HTTP JSON.stringify makes NaN null; over RPC it arrives as NaN and the queue names it.
    if (_name === "rpc") await expect(client.enqueue({ type, payload: { n: Number.NaN } })).rejects.toMatchObject({ code: "invalid_request", message: expect.stringMatching(/payload\.n/) });
  });
});
