/**
 * stop() and a claim waiting for due work (docs/pull-workers.md "Pull workers",
 * Shutdown): one the queue has not answered is ended at once; one whose answer
 * is arriving is read to its end and the jobs it leased are released (pending,
 * due now, the attempt not counted), never left to lapse.
 *
 * The stand-in fetch aborts as the Fetch standard says a fetch does: before the
 * answer's status, the call rejects; after it, reading the body does.
 */
import { describe, expect, it } from "vitest";
import { createWorker } from "../../../src/pull-worker";
import { leasedJob } from "./fake-queue-api";

function answeringQueue() {
  const released: string[] = [];
  const claims: string[] = [];
  let statusIn!: () => void;
  const statusArrived = new Promise<void>((resolve) => (statusIn = resolve));
  let answer: ((jobs: unknown[]) => void) | null = null;
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const path = new URL(String(input)).pathname;
    const signal = init?.signal ?? undefined;
    if (path === "/v1/types") return Response.json({ items: [{ type: "t" }] });
    if (path === "/v1/claim") {
      claims.push(String(init?.body));
      // Nothing due: the claim waits (until its end is asked for, in this stand-in).
      if (!answering) return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
      answering = false;
      let body!: ReadableStreamDefaultController<Uint8Array>;
      const stream = new ReadableStream<Uint8Array>({ start: (c) => void (body = c) });
      signal?.addEventListener("abort", () => body.error(signal.reason));
      answer = (jobs) => {
        if (signal?.aborted) return;
        body.enqueue(new TextEncoder().encode(JSON.stringify({ jobs })));
        body.close();
      };
      // Said once the worker has the status (the next task), as when a real answer's status comes off the socket.
      setTimeout(statusIn, 0);
      return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
    }
    const release = /^\/v1\/jobs\/([^/]+)\/release$/.exec(path);
    if (release) released.push(decodeURIComponent(release[1]!));
    return Response.json({});
  }) as typeof globalThis.fetch;
  let answering = true;
  return {
    fetch,
    released,
    claims,
    statusArrived,
    /** The first claim's answer: no status yet (it waits like any other). */
    waitFirst() {
      answering = false;
    },
    answer: (jobs: unknown[]) => answer!(jobs),
  };
}

describe("createWorker: stop() and a waiting claim", () => {
  it("the queue's answer has begun to arrive when stop() is called: the jobs it leased are released, not dropped, and no handler starts", async () => {
    const queue = answeringQueue();
    let ran = 0;
    const w = createWorker({ url: "http://queue.test", token: "t", types: ["t"], handlers: { t: async () => (ran++, { ok: true }) }, fetch: queue.fetch, concurrency: 2, log: () => {} });
    const started = w.start();
    await queue.statusArrived;
    const stopped = w.stop({ timeoutMs: 5_000 });
    queue.answer([leasedJob("j1", "t", Date.now(), 30_000), leasedJob("j2", "t", Date.now(), 30_000)]);
    await stopped;
    await started;
    expect(ran).toBe(0);
    expect(queue.released.sort()).toEqual(["j1", "j2"]);
    expect(queue.claims).toHaveLength(1);
  });

  it("runOnce(): a claim stop() was called during gives back what it was answered with", async () => {
    const queue = answeringQueue();
    let ran = 0;
    const w = createWorker({ url: "http://queue.test", token: "t", types: ["t"], handlers: { t: async () => (ran++, { ok: true }) }, fetch: queue.fetch, log: () => {} });
    const once = w.runOnce();
    await queue.statusArrived;
    const stopped = w.stop({ timeoutMs: 5_000 });
    queue.answer([leasedJob("j1", "t", Date.now(), 30_000)]);
    expect(await once).toBe(0);
    await stopped;
    expect(ran).toBe(0);
    expect(queue.released).toEqual(["j1"]);
  });

  it("a claim the queue has not begun to answer is ended at once: stop() does not wait out waitMs", async () => {
    const queue = answeringQueue();
    queue.waitFirst();
    const w = createWorker({ url: "http://queue.test", token: "t", types: ["t"], handlers: { t: async () => ({ ok: true }) }, fetch: queue.fetch, waitMs: 30_000, log: () => {} });
    const started = w.start();
    while (queue.claims.length === 0) await new Promise((r) => setTimeout(r, 5));
    const t0 = Date.now();
    await w.stop({ timeoutMs: 5_000 });
    await started;
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(queue.released).toEqual([]);
  });

  it("an answer that never ends is cut off at stop()'s deadline", async () => {
    const queue = answeringQueue();
    const w = createWorker({ url: "http://queue.test", token: "t", types: ["t"], handlers: { t: async () => ({ ok: true }) }, fetch: queue.fetch, log: () => {} });
    const started = w.start();
    await queue.statusArrived;
    const t0 = Date.now();
    await w.stop({ timeoutMs: 200 });
    await started;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(queue.released).toEqual([]);
  });
});
