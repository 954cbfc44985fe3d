/**
 * createWorker's lease, end to end against a stand-in queue on vitest's fake
 * clock: a handler whose heartbeats cannot reach the queue is aborted
 * (`lease_lost`) at the lease's end by this machine's clock, and nothing more is
 * written for its job (docs/pull-workers.md "Pull workers", Leases).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobContext } from "../../../src/runtime/context";
import type { JobAbortedError } from "../../../src/runtime/errors";
import { createWorker } from "../../../src/pull-worker";
import { fakeQueueApi } from "./fake-queue-api";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A handler that waits for its signal (or 10 s), then returns a result anyway: said when, and why, it was aborted. */
function patient() {
  const seen = { abortedAt: null as number | null, reason: null as string | null };
  const handler = async (_p: object, ctx: JobContext) => {
    await new Promise<void>((resolve) => {
      ctx.signal.addEventListener("abort", () => resolve());
      setTimeout(resolve, 10_000);
    });
    if (ctx.signal.aborted) {
      seen.abortedAt = Date.now();
      seen.reason = (ctx.signal.reason as JobAbortedError).reason;
    }
    return { finishedAnyway: true };
  };
  return { seen, handler };
}

describe("createWorker: the lease by this machine's clock", () => {
  it.each([
    ["the same clock", 0],
    ["a queue clock an hour ahead", 3_600_000],
    ["a queue clock an hour behind", -3_600_000],
  ])("heartbeats that cannot reach the queue: the handler is aborted (lease_lost) before its lease ends, and nothing more is written (%s)", async (_name, clockOffsetMs) => {
    const queue = fakeQueueApi({ types: ["t"], clockOffsetMs });
    queue.put("j1", "t");
    queue.state.heartbeats = "unreachable";
    const { seen, handler } = patient();
    const lines: Record<string, unknown>[] = [];
    const w = createWorker({ url: "http://queue.test", token: "t", types: ["t"], handlers: { t: handler }, leaseMs: 6_000, fetch: queue.fetch, log: (l) => lines.push(l) });
    const claimedAt = Date.now();
    const ran = w.runOnce();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(seen.reason).toBeNull(); // not before the margin kept before the lease's end
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen.reason).toBe("lease_lost");
    expect(seen.abortedAt! - claimedAt).toBeLessThan(6_000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await ran).toBe(1);
    // It tried to renew (every 2 s) and was never answered; after the lease's end it wrote nothing, not even a heartbeat.
    expect(queue.sent.filter((s) => s.path.endsWith("/heartbeat")).length).toBeGreaterThanOrEqual(2);
    expect(queue.sent.filter((s) => s.at >= seen.abortedAt!)).toEqual([]);
    expect(queue.writesFor("j1")).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ event: "worker:lease_lapsed", id: "j1" }));
  });

  it("confirmed renewals keep the job through three leases, whatever the queue's clock reads", async () => {
    const queue = fakeQueueApi({ types: ["t"], clockOffsetMs: -3_600_000 });
    queue.put("j1", "t");
    const { seen, handler } = patient();
    const w = createWorker({ url: "http://queue.test", token: "t", types: ["t"], handlers: { t: handler }, leaseMs: 3_000, fetch: queue.fetch, log: () => {} });
    const ran = w.runOnce();
    await vi.advanceTimersByTimeAsync(11_000);
    expect(await ran).toBe(1);
    expect(seen.reason).toBeNull();
    expect(queue.writesFor("j1").map((s) => s.path)).toEqual(["/v1/jobs/complete"]);
  });

  it("the queue cut off mid-run: the deadline is the last confirmed lease's end", async () => {
    const queue = fakeQueueApi({ types: ["t"] });
    queue.put("j1", "t");
    const { seen, handler } = patient();
    const w = createWorker({ url: "http://queue.test", token: "t", types: ["t"], handlers: { t: handler }, leaseMs: 3_000, fetch: queue.fetch, log: () => {} });
    const start = Date.now();
    const ran = w.runOnce();
    // Renewals at 1 s and 2 s are confirmed (the lease then ends at 5 s); from 2.5 s the queue is out of reach.
    await vi.advanceTimersByTimeAsync(2_500);
    queue.state.heartbeats = "unreachable";
    await vi.advanceTimersByTimeAsync(2_000);
    expect(seen.reason).toBeNull();
    await vi.advanceTimersByTimeAsync(500);
    expect(seen.reason).toBe("lease_lost");
    expect(seen.abortedAt! - start).toBeGreaterThan(4_000);
    expect(seen.abortedAt! - start).toBeLessThan(5_000);
    await vi.advanceTimersByTimeAsync(10_000);
    await ran;
    expect(queue.writesFor("j1")).toEqual([]);
  });

  it("renewEveryMs: false and no ctx.heartbeat(): the handler is aborted at its lease's end; ctx.heartbeat() confirmed moves it", async () => {
    const queue = fakeQueueApi({ types: ["quiet", "beats"] });
    queue.put("q", "quiet");
    queue.put("b", "beats");
    const quiet = patient();
    let beatsAborted = false;
    const w = createWorker({
      url: "http://queue.test",
      token: "t",
      types: ["quiet", "beats"],
      concurrency: 2,
      handlers: {
        quiet: quiet.handler,
        beats: async (_p: object, ctx: JobContext) => {
          for (let i = 0; i < 4; i++) {
            await new Promise((r) => setTimeout(r, 1_500));
            await ctx.heartbeat();
          }
          beatsAborted = ctx.signal.aborted;
          return { ok: true };
        },
      },
      leaseMs: 2_000,
      renewEveryMs: false,
      fetch: queue.fetch,
      log: () => {},
    });
    const ran = w.runOnce();
    await vi.advanceTimersByTimeAsync(12_000);
    expect(await ran).toBe(2);
    expect(quiet.seen.reason).toBe("lease_lost");
    expect(quiet.seen.abortedAt!).toBeLessThan(2_000 + queue.sent[0]!.at);
    expect(beatsAborted).toBe(false);
    expect(queue.writesFor("q")).toEqual([]);
    expect(queue.writesFor("b").map((s) => s.path)).toEqual(["/v1/jobs/complete"]);
  });
});
