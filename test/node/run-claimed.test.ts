/**
 * runClaimed's lease on vitest's fake clock, against stand-in lease calls: a
 * run whose renewals cannot reach the queue is aborted (`lease_lost`) before
 * its lease ends, and the job is neither completed nor failed by it
 * (docs/producers.md "Inline claims", docs/guarantees.md "Guarantees and limits").
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { QueueClientError } from "../../src/client/errors";
import { noteClaimSent, runClaimed, type LeaseOps } from "../../src/client/run-claimed";
import { leasedJob } from "./pull-worker/fake-queue-api";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lease calls by the queue's clock (`offset` from this machine's): `reachable` says whether a heartbeat gets there. */
function leaseOps(offset: number, leaseMs: number) {
  const calls: string[] = [];
  const state = { reachable: true, followers: [] as ReturnType<typeof leasedJob>[] };
  const ops: LeaseOps = {
    heartbeat: async (id) => {
      calls.push(`heartbeat ${id}`);
      if (!state.reachable) throw new TypeError("fetch failed (injected: the queue is unreachable)");
      return { leaseExpiresAt: Date.now() + offset + leaseMs };
    },
    complete: async (id) => void calls.push(`complete ${id}`),
    write: async (id, _token, w) => (calls.push(`${w.path} ${id}`), w.path === "fail" ? { outcome: "retry" } : {}),
    claimKey: async () => (calls.push("claimKey"), state.followers.shift() ?? null),
  };
  return { ops, calls, state };
}

describe("runClaimed: the lease by this machine's clock", () => {
  it.each([0, 3_600_000, -3_600_000])("renewals that cannot reach the queue: fn is aborted (lease_lost) before the lease ends; no complete, no fail, no follower (queue clock offset %i)", async (offset) => {
    const { ops, calls, state } = leaseOps(offset, 6_000);
    state.reachable = false;
    const handle = noteClaimSent(leasedJob("j1", "sync", Date.now() + offset, 6_000, { dedupeKey: "acct" }), Date.now());
    let abortedAt: number | null = null;
    let reason: unknown = null;
    const start = Date.now();
    const run = runClaimed(ops, handle, async (_job, { signal }) => {
      await new Promise<void>((resolve) => {
        signal.addEventListener("abort", () => resolve());
        setTimeout(resolve, 10_000);
      });
      if (signal.aborted) [abortedAt, reason] = [Date.now(), signal.reason];
      return { finishedAnyway: true };
    });
    const settled = run.then(
      () => "resolved",
      (e: unknown) => e,
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(abortedAt).toBeNull();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(abortedAt! - start).toBeLessThan(6_000);
    expect(reason).toBeInstanceOf(QueueClientError);
    expect((reason as QueueClientError).code).toBe("lease_lost");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await settled).toBe(reason);
    expect(calls.filter((c) => !c.startsWith("heartbeat"))).toEqual([]);
  });

  it("fn that throws once its lease lapsed: runClaimed rejects with the lapse (lease_lost), and the job is not failed by it", async () => {
    const { ops, calls, state } = leaseOps(0, 3_000);
    state.reachable = false;
    const handle = noteClaimSent(leasedJob("j1", "sync", Date.now(), 3_000, { dedupeKey: "acct" }), Date.now());
    const run = runClaimed(ops, handle, async (_job, { signal }) => {
      await new Promise((r) => (signal.addEventListener("abort", r), setTimeout(r, 10_000)));
      throw new Error("aborted fetch");
    });
    const settled = run.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(12_000);
    expect(await settled).toMatchObject({ code: "lease_lost" });
    expect(calls.filter((c) => !c.startsWith("heartbeat"))).toEqual([]);
  });

  it("confirmed renewals keep the job past three leases; then it completes and the follower runs", async () => {
    const { ops, calls, state } = leaseOps(-3_600_000, 3_000);
    state.followers.push(leasedJob("j2", "sync", Date.now() - 3_600_000 + 10_000, 3_000, { dedupeKey: "acct" }));
    const handle = noteClaimSent(leasedJob("j1", "sync", Date.now() - 3_600_000, 3_000, { dedupeKey: "acct" }), Date.now());
    const aborted: boolean[] = [];
    const run = runClaimed(ops, handle, async (job, { signal }) => {
      await new Promise((r) => setTimeout(r, job.id === "j1" ? 10_000 : 100));
      aborted.push(signal.aborted);
      return { id: job.id };
    });
    await vi.advanceTimersByTimeAsync(11_000);
    expect(await run).toEqual({ id: "j1" });
    expect(aborted).toEqual([false, false]);
    expect(calls.filter((c) => !c.startsWith("heartbeat"))).toEqual(["complete j1", "claimKey", "complete j2", "claimKey"]);
  });

  it("a handle held before runClaimed is called: its lease counts from its claim's send, not from the call", async () => {
    const { ops, state } = leaseOps(0, 6_000);
    state.reachable = false;
    const claimedAt = Date.now();
    const handle = noteClaimSent(leasedJob("j1", "sync", Date.now(), 6_000, { dedupeKey: "acct" }), claimedAt);
    await vi.advanceTimersByTimeAsync(4_000); // the caller held the handle 4 s
    let abortedAt: number | null = null;
    const run = runClaimed(ops, handle, async (_job, { signal }) => {
      await new Promise<void>((resolve) => (signal.addEventListener("abort", () => resolve()), setTimeout(resolve, 10_000)));
      if (signal.aborted) abortedAt = Date.now();
    }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    await run;
    // Before the queue's 6 s are up since the claim — 0.1.0 counted them from the call, 4 s late.
    expect(abortedAt! - claimedAt).toBeLessThan(6_000);
  });

  it("a handle this client did not claim is renewed first, and its lease kept from that renewal", async () => {
    const { ops, calls } = leaseOps(3_600_000, 6_000);
    const handle = leasedJob("j1", "sync", Date.now() + 3_600_000 - 50_000, 6_000, { dedupeKey: "acct" }); // e.g. passed across a queue of the caller's own
    const run = runClaimed(ops, handle, async () => ({ ok: true }));
    await vi.advanceTimersByTimeAsync(10);
    expect(await run).toEqual({ ok: true });
    expect(calls.slice(0, 2)).toEqual(["heartbeat j1", "complete j1"]);
  });
});
