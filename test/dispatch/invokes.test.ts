/**
 * Child jobs and failure handlers end to end (docs/workflows.md "Child jobs", "Failure handlers"): pushed demo
 * types through the real handler Worker — a parent's fan-out, its children's results back in order, a child that
 * fails thrown to its parent, a cancel that cascades (or not), the children listed — and a pull worker
 * (edgequeue/worker) invoking the same way over HTTP; demo.fatal's onFailure enqueues demo.compensate once.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ChildJobFailedError, createWorker } from "../../src/pull-worker";
import { runInDurableObject } from "cloudflare:test";
import { homeOfJobId } from "../../src/job/home";
import { api, flushJobs, isTerminal, TOKEN, uniqueType, waitForJob } from "../helpers/api";
import { env } from "../helpers/scope";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

async function enqueue(type: string, payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const r = await api("POST", "/v1/jobs", { type, payload, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job.id as string;
}

const children = async (id: string, query = "") => (await api("GET", `/v1/jobs/${id}/children${query}`)).body;

describe("child jobs, pushed", () => {
  it("demo.parent fans out n demo.echo children and returns their results in order; each child names its parent", async () => {
    const id = await enqueue("demo.parent", { n: 25 });
    const done = await waitForJob(id, isTerminal, 20_000);
    expect(done).toMatchObject({ state: "completed", attempts: 1, result: { results: Array.from({ length: 25 }, (_, i) => ({ i })) } });
    // One replay after the last child: the first attempt and the resumed one (a resumed wait spends no attempt).
    expect(done.attempts).toBe(1);
    const page = await children(id, "?limit=10");
    expect(page.children).toHaveLength(10);
    expect(page.children[0]).toMatchObject({ step: "item-0", job: { type: "demo.echo", state: "completed", parentId: id, payload: { i: 0 } } });
    const rest = await children(id, `?cursor=${page.next}&limit=100`);
    expect(rest.next).toBeNull();
    expect([...page.children, ...rest.children].map((c: { step: string }) => c.step)).toEqual(Array.from({ length: 25 }, (_, i) => `item-${i}`));
    expect((await api("GET", `/v1/jobs/${id}/steps`)).body.items).toHaveLength(25);
    const timeline = (await api("GET", `/v1/jobs/${id}/timeline`)).body.steps.map((s: { state: string; note: string | null }) => [s.state, s.note]);
    expect(timeline).toContainEqual(["waiting", 'waiting for 25 children ("item-0", "item-1", "item-2", …)']);
    expect((await api("GET", `/v1/jobs/${id.slice(0, -2)}zz/children`)).status).toBe(404);
  });

  it("cancelling a waiting parent cancels its live children; cascade: false leaves them running", async () => {
    const type = "demo.approve";
    // demo.parent's children end at once: a parent whose child waits is a pull type here.
    const parentType = uniqueType("test.parent");
    const handlers = {
      [parentType]: async (_p: unknown, ctx: any) => ctx.invoke("wait", { type, payload: {} }),
    };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers, fetch: fetchCoordinator, log: () => {} });
    const a = await enqueue(parentType);
    const b = await enqueue(parentType);
    await w.runOnce();
    await w.runOnce();
    const childOf = async (id: string) => (await children(id)).children[0].id as string;
    const ca = await childOf(a);
    const cb = await childOf(b);
    await waitForJob(ca, (j) => j.state === "waiting");
    await waitForJob(cb, (j) => j.state === "waiting");
    expect((await api("GET", `/v1/jobs/${a}`)).body.job).toMatchObject({ state: "waiting", waitingFor: [{ kind: "invoke", name: "wait", child: ca }] });

    expect((await api("POST", `/v1/jobs/${a}/cancel`, {})).body.job.state).toBe("cancelled");
    expect(await waitForJob(ca, isTerminal)).toMatchObject({ state: "cancelled", cancelReason: expect.stringContaining(a) });
    expect((await api("POST", `/v1/jobs/${b}/cancel`, { cascade: false })).body.job.state).toBe("cancelled");
    expect((await api("GET", `/v1/jobs/${cb}`)).body.job.state).toBe("waiting");
    expect((await api("POST", `/v1/jobs/${b}/cancel`, { cascade: "no" })).status).toBe(400);
    await api("POST", `/v1/jobs/${cb}/cancel`, {});
    await w.stop();
  });
});

describe("child jobs, pulled", () => {
  it("a pull worker's parent waits for its children, catches a failed one as ChildJobFailedError, and a replay enqueues none twice", async () => {
    const parentType = uniqueType("test.parent");
    const handlers = {
      [parentType]: async (_p: unknown, ctx: any) => {
        const ok = await ctx.invoke("ok", { type: "demo.echo", payload: { fine: true } });
        try {
          await ctx.invoke("bad", { type: "demo.fatal", payload: {} });
          return { ok, caught: null };
        } catch (e) {
          return { ok, caught: e instanceof ChildJobFailedError ? { state: e.state, failureKind: e.failureKind, step: e.step } : String(e) };
        }
      },
    };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers, fetch: fetchCoordinator, log: () => {} });
    const id = await enqueue(parentType);
    let runs = 0;
    for (let job = (await api("GET", `/v1/jobs/${id}`)).body.job; !isTerminal(job) && runs < 6; runs++) {
      expect(await w.runOnce()).toBe(1);
      // Each attempt ends on the next child's wait; its end makes the parent due again.
      job = await waitForJob(id, (j) => j.state !== "waiting");
    }
    // One attempt per child, then the last; the waits spent none of the job's attempts.
    expect(runs).toBe(3);
    const done = (await api("GET", `/v1/jobs/${id}`)).body.job;
    expect(done).toMatchObject({ state: "completed", attempts: 1, result: { ok: { fine: true }, caught: { state: "failed", failureKind: "fatal", step: "bad" } } });
    const list = (await children(id)).children;
    expect(list.map((c: any) => [c.step, c.job.state])).toEqual([
      ["ok", "completed"],
      ["bad", "failed"],
    ]);
    await w.stop();
  });

  it("an invoke in a loop under one name makes one child per call, each with its own result", async () => {
    const parentType = uniqueType("test.parent");
    const handlers = {
      [parentType]: async (_p: unknown, ctx: any) => {
        const got: unknown[] = [];
        for (let i = 0; i < 2; i++) got.push(await ctx.invoke("echo", { type: "demo.echo", payload: { i } }));
        return { got };
      },
    };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers, fetch: fetchCoordinator, log: () => {} });
    const id = await enqueue(parentType);
    for (let runs = 0; runs < 3; runs++) {
      expect(await w.runOnce()).toBe(1);
      if (runs < 2) await waitForJob(id, (j) => j.state === "pending");
    }
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: { got: [{ i: 0 }, { i: 1 }] } });
    const list = (await children(id)).children;
    expect(new Set(list.map((c: any) => c.id)).size).toBe(2);
    await w.stop();
  });

  it("a fan-out larger than the child type's maxDepth lands as room frees", async () => {
    const parentType = uniqueType("test.parent");
    const scope = { type: "Capped", id: crypto.randomUUID() };
    const handlers = {
      [parentType]: async (_p: unknown, ctx: any) => ({ n: (await Promise.all(Array.from({ length: 12 }, (_, i) => ctx.invoke(`c-${i}`, { type: "demo.capped", payload: {}, scope })))).length }),
    };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers, fetch: fetchCoordinator, log: () => {} });
    const id = await enqueue(parentType);
    expect(await w.runOnce()).toBe(1);
    // demo.capped holds at most 5 pending per object: the other 7 wait in the outbox and land as the first run.
    await waitForJob(id, (j) => j.state === "pending", 30_000);
    expect(await w.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: { n: 12 } });
    await w.stop();
  }, 40_000);

  it("an invoke of an undeclared type or a bad request fails the parent, naming the field", async () => {
    const parentType = uniqueType("test.parent");
    const handlers = { [parentType]: async (_p: unknown, ctx: any) => ctx.invoke("x", { type: "demo.echo", payload: { big: "x" }, priority: 1.5 }) };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers, fetch: fetchCoordinator, log: () => {} });
    const id = await enqueue(parentType);
    expect(await w.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "failed", failureKind: "fatal", lastError: expect.stringContaining('ctx.invoke("x"): request.priority') });
    await w.stop();
  });
});

describe("failure handlers", () => {
  it("demo.fatal's failure enqueues one demo.compensate in its scope with the failed job's view; a retried and failed-again job gets another", async () => {
    const scope = { type: "Order", id: `o-${crypto.randomUUID()}` };
    const id = await enqueue("demo.fatal", {}, { scope });
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "failed", failureKind: "fatal" });
    const handlerJobs = async () => {
      const r = await api("GET", `/v1/jobs?type=demo.compensate&scopeType=Order&scopeId=${scope.id}`);
      return r.body.items as any[];
    };
    const { vi } = await import("vitest");
    const first = await vi.waitFor(async () => {
      const [job, ...more] = await handlerJobs();
      if (!job || job.state !== "completed") throw new Error("no completed handler yet");
      expect(more).toEqual([]);
      return job;
    });
    expect(first).toMatchObject({ scope, tags: ["edgequeue:onfailure"], payload: { job: { id, state: "failed", failureKind: "fatal" } }, result: { compensated: id } });
    expect((await api("POST", `/v1/jobs/${id}/retry`, {})).status).toBe(200);
    await waitForJob(id, (j) => j.state === "failed" && j.attempts === 1);
    await vi.waitFor(async () => expect((await handlerJobs()).filter((j) => j.state === "completed")).toHaveLength(2));
  });
});

describe("failure handlers, pulled", () => {
  it("a pulled job's failure enqueues its handler once in its scope; the handler failing enqueues none, whatever its type's own onFailure", async () => {
    const scope = { type: "Onfail", id: crypto.randomUUID() };
    const id = await enqueue("pull.onfail", { n: 1 }, { scope });
    const fail = async (type: string) => {
      const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], handlers: { [type]: () => { throw new Error(`${type} broke`); } }, fetch: fetchCoordinator, log: () => {} });
      await flushJobs(id);
      expect(await w.runOnce()).toBe(1);
      await w.stop();
    };
    await fail("pull.onfail");
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "failed", lastError: "pull.onfail broke" });
    const inScope = async (type: string) => (await api("GET", `/v1/jobs?type=${type}&scopeType=Onfail&scopeId=${scope.id}`)).body.items as any[];
    const { vi } = await import("vitest");
    const [handler] = await vi.waitFor(async () => {
      const list = await inScope("pull.onfail.handler");
      expect(list).toHaveLength(1);
      return list;
    });
    expect(handler).toMatchObject({ scope, state: "pending", tags: ["edgequeue:onfailure"], payload: { job: { id, state: "failed", failureKind: "retries_exhausted", lastError: "pull.onfail broke", payload: { n: 1 } } } });
    await fail("pull.onfail.handler");
    expect(await waitForJob(handler.id, isTerminal)).toMatchObject({ state: "failed" });
    // Its failure owed nothing: its object's outbox is empty, and no job of its own onFailure type exists.
    const home = env.SCOPE.getByName(homeOfJobId(handler.id)!.name);
    await vi.waitFor(async () => expect(await runInDurableObject(home, (_o: unknown, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n)).toBe(0));
    expect(await inScope("pull.onfail.handler2")).toEqual([]);
    expect(await inScope("pull.onfail.handler")).toHaveLength(1);
  });

  it("Promise.all over an open child and a failed one throws the failure at once; uncaught, the parent fails and cancels the open child", async () => {
    const parentType = uniqueType("test.parent");
    const handlers = {
      // One child waits for a signal, the other fails at once: the parent runs again at the failure and does not catch it.
      [parentType]: async (_p: unknown, ctx: any) => Promise.all([ctx.invoke("slow", { type: "demo.approve", payload: {} }), ctx.invoke("bad", { type: "demo.fatal", payload: {} })]),
    };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers, fetch: fetchCoordinator, log: () => {} });
    const id = await enqueue(parentType, {}, { maxAttempts: 1 });
    expect(await w.runOnce()).toBe(1);
    await waitForJob(id, (j) => j.state === "pending");
    expect(await w.runOnce()).toBe(1);
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "failed", lastError: expect.stringContaining("bad") });
    const slow = (await children(id)).children.find((c: { step: string }) => c.step === "slow").id;
    expect(await waitForJob(slow, isTerminal)).toMatchObject({ state: "cancelled", cancelReason: expect.stringContaining(id) });
    await w.stop();
  });
});

describe("event waits", () => {
  it("demo.await.paid waits (holding nothing) for an order.paid event with its orderId; others pass it by; a re-emit ends nothing", async () => {
    const orderId = `o-${crypto.randomUUID()}`;
    const id = await enqueue("demo.await.paid", { orderId }, { scope: { type: "Shop", id: "s1" } });
    expect(await waitForJob(id, (j) => j.state === "waiting")).toMatchObject({ attempts: 0, waitingFor: [{ kind: "event", name: "order.paid", until: null }] });
    const { vi } = await import("vitest");
    // The wait registers with the topic's registry just after it began: an event a moment later finds it.
    expect((await api("POST", "/v1/topics/order.paid/events", { payload: { orderId: "someone-else" } })).body).toMatchObject({ deliveries: [], waits: 0 });
    const sent = await vi.waitFor(async () => {
      const r = await api("POST", "/v1/topics/order.paid/events", { id: `paid-${orderId}`, payload: { orderId, amount: 42 } });
      expect(r.status).toBe(202);
      return r.body;
    });
    expect(sent).toMatchObject({ eventId: `paid-${orderId}` });
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { orderId, amount: 42 } });
    expect((await api("POST", "/v1/topics/order.paid/events", { id: `paid-${orderId}`, payload: { orderId } })).body.waits).toBe(0);
  });

  it("an event emitted after the wait began but before it registered still ends it; a timeout answers null; a cancel drops the wait", async () => {
    const parentType = uniqueType("test.await");
    const orderId = `o-${crypto.randomUUID()}`;
    const handlers = {
      [parentType]: async (p: { timeoutMs?: number }, ctx: any) => ({ got: await ctx.waitForEvent("order.paid", { match: { orderId }, timeoutMs: p.timeoutMs }) }),
    };
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [parentType], handlers, fetch: fetchCoordinator, log: () => {} });
    const id = await enqueue(parentType);
    expect(await w.runOnce()).toBe(1);
    await waitForJob(id, (j) => j.state !== "running");
    const emitted = (await api("POST", "/v1/topics/order.paid/events", { payload: { orderId, n: 1 } })).body;
    await waitForJob(id, (j) => j.state === "pending");
    expect(await w.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: { got: { topic: "order.paid", payload: { orderId, n: 1 }, id: emitted.eventId } } });

    const timed = await enqueue(parentType, { timeoutMs: 0 });
    expect(await w.runOnce()).toBe(1);
    await waitForJob(timed, (j) => j.state === "pending");
    expect(await w.runOnce()).toBe(1);
    expect((await api("GET", `/v1/jobs/${timed}`)).body.job).toMatchObject({ state: "completed", result: { got: null } });

    const dropped = await enqueue(parentType);
    expect(await w.runOnce()).toBe(1);
    await waitForJob(dropped, (j) => j.state === "waiting");
    expect((await api("POST", `/v1/jobs/${dropped}/cancel`, {})).body.job.state).toBe("cancelled");
    await w.stop();
  });
});
