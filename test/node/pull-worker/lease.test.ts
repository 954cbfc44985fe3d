/**
 * runtime/lease.ts on vitest's fake clock: the deadline kept from durations the
 * queue granted (never its timestamps read as local times), renewals that move
 * it, and the lapse when none was confirmed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { grantedMs, Lease, leaseMargin, type LeaseOptions } from "../../../src/runtime/lease";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const HOUR = 3_600_000;

function lease(more: Partial<LeaseOptions> & { queueOffset?: number } = {}) {
  const lapses: number[] = [];
  const beats: number[] = [];
  const queueNow = Date.now() + (more.queueOffset ?? 0);
  const l = new Lease({
    job: { startedAt: queueNow, leaseExpiresAt: queueNow + 10_000 },
    sentAt: Date.now(),
    leaseMs: 10_000,
    renewEveryMs: null,
    heartbeat: async () => (beats.push(Date.now()), undefined),
    onLapse: () => lapses.push(Date.now()),
    ...more,
  });
  return { l, lapses, beats, t0: Date.now() };
}

describe("leaseMargin and grantedMs", () => {
  it("the margin is a tenth of the lease, at most a second", () => {
    expect(leaseMargin(1_000)).toBe(100);
    expect(leaseMargin(6_000)).toBe(600);
    expect(leaseMargin(30_000)).toBe(1_000);
    expect(leaseMargin(12 * HOUR)).toBe(1_000);
  });

  it("what was granted is the answer's own span; with no start, what was asked", () => {
    expect(grantedMs({ startedAt: 5 * HOUR, leaseExpiresAt: 5 * HOUR + 6_000 }, 30_000)).toBe(6_000);
    expect(grantedMs({ startedAt: null, leaseExpiresAt: 123 }, 30_000)).toBe(30_000);
  });
});

describe("Lease", () => {
  it.each([0, HOUR, -HOUR])("lapses at sentAt + granted − margin by this clock, whatever the queue's clock reads (offset %i)", async (queueOffset) => {
    const { lapses, t0 } = lease({ queueOffset });
    await vi.advanceTimersByTimeAsync(8_999);
    expect(lapses).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lapses).toEqual([t0 + 9_000]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(lapses).toHaveLength(1);
  });

  it("the deadline counts from when the claim was sent, not when its answer came", async () => {
    const sentAt = Date.now();
    await vi.advanceTimersByTimeAsync(2_000); // the claim's round trip
    const { l, lapses } = lease({ sentAt });
    expect(l.deadline).toBe(sentAt + 9_000);
    await vi.advanceTimersByTimeAsync(7_000);
    expect(lapses).toEqual([sentAt + 9_000]);
  });

  it("a confirmed renewal moves the deadline; an older answer arriving late never shortens it", async () => {
    const queueNow = Date.now() - HOUR;
    const { l, lapses, t0 } = lease({ job: { startedAt: queueNow, leaseExpiresAt: queueNow + 10_000 } });
    await vi.advanceTimersByTimeAsync(5_000);
    l.confirm(queueNow + 5_000 + 10_000);
    expect(l.deadline).toBe(t0 + 14_000);
    l.confirm(queueNow + 2_000 + 10_000);
    expect(l.deadline).toBe(t0 + 14_000);
    await vi.advanceTimersByTimeAsync(8_999);
    expect(lapses).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lapses).toEqual([t0 + 14_000]);
    expect(l.lapsed).toBe(true);
  });

  it("renews every renewEveryMs; confirmed answers keep it, an unconfirmed one does not", async () => {
    let reachable = true;
    const queueOffset = 42 * HOUR;
    const lapses: number[] = [];
    const t0 = Date.now();
    const l = new Lease({
      job: { startedAt: t0 + queueOffset, leaseExpiresAt: t0 + queueOffset + 3_000 },
      sentAt: t0,
      leaseMs: 3_000,
      renewEveryMs: 1_000,
      heartbeat: async () => (reachable ? Date.now() + queueOffset + 3_000 : undefined),
      onLapse: () => lapses.push(Date.now()),
    });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(lapses).toEqual([]);
    reachable = false; // the last confirmed renewal, at 20 s, runs to 23 s
    await vi.advanceTimersByTimeAsync(3_000);
    expect(lapses).toEqual([t0 + 22_700]);
    l.end();
  });

  it("renew() is one heartbeat now (ctx.heartbeat()); stopRenewing keeps the deadline; end() ends both", async () => {
    const { l, lapses, beats, t0 } = lease({ renewEveryMs: 1_000 });
    await vi.advanceTimersByTimeAsync(2_500);
    expect(beats).toEqual([t0 + 1_000, t0 + 2_000]);
    await l.renew();
    expect(beats).toHaveLength(3);
    l.stopRenewing();
    await vi.advanceTimersByTimeAsync(7_000);
    expect(beats).toHaveLength(3);
    expect(lapses).toEqual([t0 + 9_000]);

    const other = lease({ renewEveryMs: 1_000 });
    other.l.end();
    await other.l.renew();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(other.beats).toEqual([]);
    expect(other.lapses).toEqual([]);
  });

  it("a claim answered past its own deadline lapses at once", async () => {
    const sentAt = Date.now();
    await vi.advanceTimersByTimeAsync(9_500);
    const { lapses } = lease({ sentAt });
    await vi.advanceTimersByTimeAsync(0);
    expect(lapses).toEqual([sentAt + 9_500]);
  });
});
