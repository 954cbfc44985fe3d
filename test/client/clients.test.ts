/**
 * The typed producer clients: over the RPC entrypoint (as a bound Worker uses
 * it) and over HTTP (as Node or a browser does), against the real coordinator.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createWorker } from "../../src/pull-worker";
import { createClient, createHttpClient, QueueClientError, type QueueBinding } from "../../src/sdk";
import { TOKEN, flushJobs, uniqueScope, uniqueType, waitForJob, isTerminal } from "../helpers/api";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;
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

  it("signal by id and to a key, and cancel with cascade: false", async () => {
    const id = (await queue.enqueue({ type: "demo.approve", payload: {} })).id;
    await waitForJob(id, (j) => j.state === "waiting");
    expect(await queue.signal(id, "approve", { by: "client" })).toEqual({ id, delivered: "resumed", waitingFor: null });
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { approved: { by: "client" } } });
    await expect(queue.signal(id, "approve")).rejects.toMatchObject({ code: "already_terminal" });

    const scope = uniqueScope();
    const keyed = (await queue.enqueue({ type: "demo.approve", payload: {}, scope, dedupeKey: "k" })).id;
    // Sent before the job reached its wait, or after: either way its wait gets it.
    const sent = await queue.signal({ type: "demo.approve", dedupeKey: "k", scope }, "approve", 7);
    expect(sent.id).toBe(keyed);
    expect(await waitForJob(keyed, isTerminal)).toMatchObject({ state: "completed", result: { approved: 7 } });
    await expect(queue.signal({ type: "demo.approve", dedupeKey: "nobody", scope }, "approve")).rejects.toMatchObject({ code: "not_found" });

    // A parent whose child waits: cancelled with cascade false, the child goes on.
    const parentType = uniqueType("client.parent");
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers: { [parentType]: (_p: unknown, ctx: any) => ctx.invoke("c", { type: "demo.approve", payload: {} }) }, fetch: fetchCoordinator, log: () => {} });
    const parent = (await queue.enqueue({ type: parentType, payload: {} })).id;
    expect(await w.runOnce()).toBe(1);
    await w.stop();
    const child = await vi.waitFor(async () => (await queue.listChildren(parent, {})).children[0]!.id as string);
    await waitForJob(child, (j) => j.state === "waiting");
    expect((await queue.cancel(parent, "no longer", { cascade: false })).state).toBe("cancelled");
    expect((await queue.get(child)).state).toBe("waiting");
    expect((await queue.cancel(child)).state).toBe("cancelled");
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
