/**
 * edgequeue/queues (docs/coming-from/cloudflare-queues.md): Cloudflare Queues' messages in, as jobs, and its
 * producer API out, over real local queues — a Worker (test/fixtures/queues) whose consumer is queueConsumer and
 * whose producer binding is miniflare's, beside the coordinator it reaches over its RPC entrypoint. A message's id
 * is its job's id, so a delivery seen twice makes one job; a message the mapping refuses is retried and, after the
 * queue's retries, dead-lettered — never dropped; a batch whose one job the queue refuses enqueues the others.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createClient, type QueueBinding } from "../../src/sdk";
import { queueConsumer, queueProducer, type QueueMessageLike } from "../../src/queues";
import { api, uniqueType } from "../helpers/api";

const fixture = (env as unknown as { QUEUES_FIXTURE: Fetcher }).QUEUES_FIXTURE;
const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue);
const send = async (path: string, body: unknown) => {
  const res = await fixture.fetch(`http://queues${path}`, { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const jobsOf = async (type: string) => (await api("GET", `/v1/jobs?type=${type}&limit=100`)).body.items as { id: string; payload: Record<string, unknown>; scope: unknown; runAt: number; createdAt: number }[];

/** A batch of messages as a consumer gets one, recording what it was told to do with each. */
function batchOf(bodies: unknown[], ids = bodies.map(() => crypto.randomUUID().replace(/-/g, ""))) {
  const told = new Map<string, string>();
  const messages: QueueMessageLike<unknown>[] = bodies.map((body, i) => ({
    id: ids[i]!,
    timestamp: new Date(),
    body,
    attempts: 1,
    ack: () => void told.set(ids[i]!, "ack"),
    retry: () => void told.set(ids[i]!, "retry"),
  }));
  return { batch: { queue: "test", messages }, told, ids };
}

describe("messages in (queueConsumer)", () => {
  it("a real queue's messages become jobs with the message's id — an R2 event notification too; a refused one is dead-lettered, not lost", async () => {
    const type = uniqueType("msg");
    const r2 = { account: "a", action: "PutObject", bucket: "uploads", object: { key: `${type}.png`, size: 512, eTag: "e" }, eventTime: "2026-12-07T00:00:00Z" };
    const sent = await send("/send", { messages: [{ body: { kind: type, n: 1 } }, { body: { kind: type, n: 2, tenant: "t1" } }, { body: r2 }, { body: { n: "no kind" } }, { body: { kind: "ignore" } }] });
    expect(sent).toEqual({ status: 200, body: { sent: 5 } });
    const jobs = await vi.waitFor(
      async () => {
        const j = await jobsOf(type);
        if (j.length < 2) throw new Error(`${j.length} jobs so far`);
        return j;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(jobs.map((j) => j.payload.n).sort()).toEqual([1, 2]);
    expect(jobs.find((j) => j.payload.n === 2)!.scope).toEqual({ type: "Tenant", id: "t1" });
    // The message's id is the job's own (a Cloudflare message id: 32 hex digits), after its home's prefix.
    for (const j of jobs) expect(j.id).toMatch(/\.[0-9a-f]{32}$/);
    await vi.waitFor(async () => expect((await jobsOf("r2.object")).some((j) => j.payload.key === `${type}.png`)).toBe(true), { timeout: 10_000, interval: 50 });
    expect((await jobsOf("r2.object")).find((j) => j.payload.key === `${type}.png`)!.payload).toEqual({ action: "PutObject", bucket: "uploads", key: `${type}.png`, size: 512 });
    // Refused by the mapping: retried once (max_retries 1), then in the dead-letter queue with its body.
    const dead = await vi.waitFor(
      async () => {
        const d = (await (await fixture.fetch("http://queues/dead")).json()) as { body: { n?: string } }[];
        if (!d.some((m) => m.body.n === "no kind")) throw new Error("not dead-lettered yet");
        return d;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(dead.filter((m) => m.body.n === "no kind")).toHaveLength(1);
  });

  it("a delivery seen twice makes one job; a job the queue refuses is retried alone while the batch's others are enqueued", async () => {
    const type = uniqueType("redelivered");
    const consume = queueConsumer<unknown, { kind: string; n: number; payload?: unknown }>({
      client: () => rpc,
      map: (m) => ({ type: m.body.kind, payload: (m.body.payload ?? { n: m.body.n }) as Record<string, never> }),
      log: () => {},
    });
    const first = batchOf([{ kind: type, n: 1 }, { kind: type, n: 2 }]);
    await consume(first.batch as never, {});
    expect([...first.told.values()]).toEqual(["ack", "ack"]);
    // Cloudflare delivers at least once: the same messages again are acked, and find the jobs they made.
    const again = batchOf([{ kind: type, n: 1 }, { kind: type, n: 2 }], first.ids);
    await consume(again.batch as never, {});
    expect([...again.told.values()]).toEqual(["ack", "ack"]);
    expect(await jobsOf(type)).toHaveLength(2);
    // A payload the queue refuses (not an object): that message is retried, the two beside it are enqueued.
    const mixed = batchOf([{ kind: type, n: 3 }, { kind: type, n: 4, payload: [1, 2] }, { kind: type, n: 5 }]);
    await consume(mixed.batch as never, {});
    expect(mixed.ids.map((id) => mixed.told.get(id))).toEqual(["ack", "retry", "ack"]);
    expect((await jobsOf(type)).map((j) => j.payload.n).sort()).toEqual([1, 2, 3, 5]);
  });

  it("a queue that cannot be reached retries every message; none is acked", async () => {
    const consume = queueConsumer<unknown, { n: number }>({
      client: () => ({ enqueueMany: async () => Promise.reject(new Error("fetch failed")) }),
      map: (m) => ({ type: "unreached.type", payload: { n: m.body.n } }),
      log: () => {},
    });
    const { batch, told } = batchOf([{ n: 1 }, { n: 2 }]);
    await consume(batch as never, {});
    expect([...told.values()]).toEqual(["retry", "retry"]);
  });
});

describe("sending, unchanged (queueProducer)", () => {
  it("send and sendBatch enqueue jobs of the type: an object body is the payload, any other is { body }, delaySeconds delays", async () => {
    const type = uniqueType("shim");
    const t0 = Date.now();
    expect(await send("/shim", { type, messages: [{ body: { to: "a@example.com" } }, { body: "plain text", contentType: "text" }, { body: [1, 2], delaySeconds: 60 }] })).toEqual({ status: 200, body: { sent: 3 } });
    expect(await send("/shim-one", { type, messages: [{ body: { one: true }, contentType: "json", delaySeconds: 5 }] })).toEqual({ status: 200, body: { sent: 1 } });
    const jobs = await jobsOf(type);
    const by = (p: (j: (typeof jobs)[number]) => boolean) => jobs.find(p)!;
    expect(jobs).toHaveLength(4);
    expect(by((j) => j.payload.to === "a@example.com").runAt).toBeLessThan(t0 + 5_000);
    expect(by((j) => j.payload.body === "plain text")).toBeTruthy();
    const delayed = by((j) => Array.isArray(j.payload.body));
    expect(delayed.runAt - delayed.createdAt).toBe(60_000);
    expect(by((j) => j.payload.one === true).runAt - by((j) => j.payload.one === true).createdAt).toBe(5_000);
  });

  it("a body JSON cannot carry, bytes, or a delay past Cloudflare's limit is refused naming the message, and nothing is sent", async () => {
    const type = uniqueType("shim-refused");
    const shim = queueProducer(rpc, { type });
    await expect(shim.sendBatch([{ body: { ok: 1 } }, { body: { at: new Date() } }])).rejects.toThrow(/^sendBatch\[1\]\.body\.at: /);
    await expect(shim.send(new Uint8Array([1, 2]), { contentType: "bytes" })).rejects.toThrow('send.contentType: "bytes" is not carried');
    await expect(shim.send({ a: 1 }, { delaySeconds: 50_000 })).rejects.toThrow(/send\.delaySeconds: 50000 is not a whole number of seconds from 0 to 43200/);
    await expect(shim.send(42, { contentType: "text" })).rejects.toThrow('send.body: contentType "text" takes a string, got number');
    expect(await jobsOf(type)).toEqual([]);
  });
});
