/** Event topics: fan-out, idempotent emit, one commit for an emit, quarantine and retry. */
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/load";
import { QueueOps } from "../../src/coordinator/operations";
import { registryHome } from "../../src/job/event-tags";
import { api, flushJobs, isTerminal, waitForJob } from "../helpers/api";
import { env } from "../helpers/scope";

describe("topics", () => {
  it("an event becomes one delivery per consumer; the same event id creates nothing more", async () => {
    const eventId = `e-${crypto.randomUUID()}`;
    const r = await api("POST", "/v1/topics/demo.topic/events", { payload: { order: 7 }, id: eventId });
    expect(r.status).toBe(202);
    expect(r.body.eventId).toBe(eventId);
    expect(r.body.deliveries).toHaveLength(2);
    const again = await api("POST", "/v1/topics/demo.topic/events", { payload: { order: 8 }, id: eventId });
    expect(again.body.deliveries).toEqual(r.body.deliveries);
    const [ok, bad] = await Promise.all(r.body.deliveries.map((id: string) => waitForJob(id, isTerminal, 10_000)));
    expect(ok).toMatchObject({ type: "demo.consumer.ok", state: "completed", payload: { order: 7 }, tags: ["topic:demo.topic", `event:${eventId}`] });
    // The consumer's handler saw which event it delivered (ctx.event).
    expect(ok.result.event).toEqual({ id: eventId, topic: "demo.topic" });
    expect(bad).toMatchObject({ type: "demo.consumer.bad", state: "failed", attempts: 2, failureKind: "retries_exhausted" });
  });

  it("an emit is one commit: with its topic's registry out of reach it makes no delivery, and sent again without an id each delivery exists once", async () => {
    const marker = crypto.randomUUID();
    const registry = registryHome("demo.topic");
    // Every call to the topic's registry fails, as an object that cannot be reached.
    const unreachable = new Proxy({}, { get: () => () => Promise.reject(new Error("injected: registry unreachable")) });
    const SCOPE = { getByName: (name: string) => (name === registry ? unreachable : env.SCOPE.getByName(name)) };
    const down = new QueueOps({ ...env, SCOPE } as never, loadConfig(env));
    await expect(down.topics.emit("demo.topic", { payload: { marker } })).rejects.toThrow(/outcome is unknown|not enqueued/);
    const up = await api("POST", "/v1/topics/demo.topic/events", { payload: { marker } });
    expect(up.status).toBe(202);
    const deliveries = async () => {
      const found: string[] = [];
      for (const type of ["demo.consumer.ok", "demo.consumer.bad"]) {
        const page = (await api("GET", `/v1/jobs?type=${type}&tag=topic:demo.topic&limit=500`)).body.items as { id: string; payload: { marker?: string } }[];
        found.push(...page.filter((j) => j.payload.marker === marker).map((j) => j.id));
      }
      return found.sort();
    };
    expect(await deliveries()).toEqual([...up.body.deliveries].sort());
    // The failed emit's staged parts are dropped by their objects (their decider never recorded a commit): still one each.
    await vi.waitFor(async () => expect(await deliveries()).toHaveLength(2), { timeout: 5_000 });
  });

  it("a wait's match compares JSON values, not their text: {id, region} matches {region, id} at any depth", async () => {
    const orderId = crypto.randomUUID();
    const r = await api("POST", "/v1/jobs", { type: "test.wait.pooled", payload: { kind: "event", topic: "order.paid", match: { order: { id: orderId, region: "eu", lines: [{ sku: "a", n: 1 }] } } }, scope: { type: "Match", id: orderId } });
    const id = r.body.job.id as string;
    await waitForJob(id, (j) => j.state === "waiting");
    // The wait registers with the registry just after it began: an emit finds it once it has.
    await vi.waitFor(async () => expect((await api("POST", "/v1/topics/order.paid/events", { payload: { order: { lines: [{ n: 1, sku: "a" }], region: "eu", id: orderId } } })).body.waits).toBe(1), { timeout: 5_000 });
    const done = await waitForJob(id, isTerminal);
    expect(done).toMatchObject({ state: "completed", result: { got: { topic: "order.paid", payload: { order: { region: "eu", id: orderId } } } } });
  });

  it("a failing consumer's delivery is quarantined, listed, and handed back by retry", async () => {
    const eventId = `q-${crypto.randomUUID()}`;
    const r = await api("POST", "/v1/topics/demo.topic/events", { payload: {}, id: eventId });
    const badId = r.body.deliveries[1];
    await waitForJob(badId, isTerminal, 10_000);
    await flushJobs(badId);
    const dead = await api("GET", "/v1/topics/demo.topic/dead?consumer=demo.consumer.bad&limit=500");
    expect(dead.status).toBe(200);
    const item = dead.body.items.find((i: any) => i.eventId === eventId);
    expect(item).toMatchObject({ consumer: "demo.consumer.bad", attempts: 2, error: "demo consumer failure", jobId: badId });
    const all = await api("GET", "/v1/topics/demo.topic/dead?limit=500");
    expect(all.body.items.some((i: any) => i.eventId === eventId)).toBe(true);

    const retried = await api("POST", `/v1/topics/demo.topic/dead/demo.consumer.bad/${eventId}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.job).toMatchObject({ id: badId, state: "pending", attempts: 0 });
    expect(await waitForJob(badId, (j) => j.state === "failed" && j.attempts === 2, 10_000)).toMatchObject({ id: badId, failureKind: "retries_exhausted" });
    expect((await api("POST", `/v1/topics/demo.topic/dead/demo.consumer.ok/${eventId}/retry`)).status).toBe(409); // completed, not failed
  });

  it("the same event id on two topics is two events", async () => {
    const eventId = `twice-${crypto.randomUUID()}`;
    const a = await api("POST", "/v1/topics/demo.topic/events", { payload: { t: "a" }, id: eventId });
    const b = await api("POST", "/v1/topics/demo.fanout/events", { payload: { t: "b" }, id: eventId });
    expect(b.body.deliveries[0]).not.toBe(a.body.deliveries[0]); // demo.consumer.ok consumes both topics
    expect((await api("GET", `/v1/jobs/${b.body.deliveries[0]}`)).body.job.payload).toEqual({ t: "b" });
  });

  it("pages through a topic's dead deliveries consumer by consumer, whatever else has failed", async () => {
    const ids = [`p1-${crypto.randomUUID()}`, `p2-${crypto.randomUUID()}`];
    const bad = await Promise.all(ids.map(async (id) => (await api("POST", "/v1/topics/demo.topic/events", { payload: {}, id })).body.deliveries[1]));
    await Promise.all(bad.map((id: string) => waitForJob(id, isTerminal, 10_000)));
    await flushJobs(...bad);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (await api("GET", `/v1/topics/demo.topic/dead?limit=2${cursor ? `&cursor=${cursor}` : ""}`)).body;
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i: any) => i.jobId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of bad) expect(seen).toContain(id);
    expect((await api("GET", "/v1/topics/demo.topic/dead?cursor=bm9wZQ")).status).toBe(400);
  });

  it("refuses unknown topics and consumers", async () => {
    expect((await api("POST", "/v1/topics/nope/events", { payload: {} })).status).toBe(404);
    const bad = await api("GET", "/v1/topics/demo.topic/dead?consumer=demo.noop");
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("consumer");
    expect((await api("POST", "/v1/topics/demo.topic/dead/demo.noop/x/retry")).status).toBe(404);
    expect((await api("POST", "/v1/topics/demo.topic/events", { payload: [] })).status).toBe(400);
  });
});

describe("an event emitted without an id to one consumer", () => {
  it("keeps its delivery's id derived from the event id (the object makes none from its seq): the delivery is named by it", async () => {
    const r = await api("POST", "/v1/topics/test.ordered.topic/events", { payload: { n: 1 } });
    expect(r.status).toBe(202);
    const [delivery] = r.body.deliveries as string[];
    expect(delivery).not.toMatch(/~[0-9a-z]+$/);
    expect(delivery!.endsWith(`.event:test.ordered.topic:${r.body.eventId}`)).toBe(true);
    expect((await api("GET", `/v1/jobs/${encodeURIComponent(delivery!)}`)).status).toBe(200);
  });
});
