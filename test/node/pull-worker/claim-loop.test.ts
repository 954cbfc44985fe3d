/**
 * pull-worker/claim-loop.ts on vitest's fake clock, with stand-in claims and slots:
 * claims ask for the free slots, a full worker waits for one, failures back off
 * (100 ms doubling to 5 s), a refusal for good ends the loop, and what a claim
 * brings after stop() goes back unstarted.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LeasedJob } from "../../../src/job/schemas";
import { claimLoop, type ClaimLoopDeps } from "../../../src/pull-worker/claim-loop";
import type { Claimed } from "../../../src/pull-worker/claims";
import { leasedJob } from "./fake-queue-api";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A loop over `size` slots whose claims are answered by `answer` (the nth claim, its limit). */
function loopOf(size: number, answer: (n: number, limit: number) => Promise<Claimed> | Claimed) {
  const said: string[] = [];
  const state = { stopping: false, running: [] as LeasedJob[] };
  let freed: (() => void) | null = null;
  let n = 0;
  const deps: ClaimLoopDeps = {
    claim: async (limit, waitMs) => (said.push(`claim ${limit} wait ${waitMs} at ${Date.now()}`), answer(n++, limit)),
    waitMs: 20_000,
    slots: {
      get free() {
        return size - state.running.length;
      },
      untilFree: () => new Promise<void>((resolve) => (freed = resolve)),
    },
    run: (job, sentAt) => (said.push(`run ${job.id} sent ${sentAt}`), state.running.push(job)),
    release: async (job) => void said.push(`release ${job.id}`),
    stopping: () => state.stopping,
    refusedForGood: (e) => (String(e).includes("401") ? new Error("refused for good") : null),
    log: (line) => said.push(`log ${String(line.event)}`),
  };
  const finish = (id: string) => {
    state.running = state.running.filter((j) => j.id !== id);
    freed?.();
  };
  const stop = () => {
    state.stopping = true;
    freed?.();
  };
  return { deps, said, state, finish, stop };
}

const job = (id: string) => leasedJob(id, "t", 0, 30_000);

describe("claimLoop", () => {
  it("asks for as many jobs as slots are free, runs them with their claim's send time, and waits for a slot when full", async () => {
    const t0 = Date.now();
    const { deps, said, finish, stop } = loopOf(2, (n) => (n === 0 ? { jobs: [job("a"), job("b")], since: [t0, t0] } : n === 1 ? { jobs: [job("c")], since: [t0 + 1] } : new Promise<Claimed>(() => {})));
    const loop = claimLoop(deps);
    await vi.advanceTimersByTimeAsync(0);
    expect(said).toEqual([`claim 2 wait 20000 at ${t0}`, `run a sent ${t0}`, `run b sent ${t0}`]);
    finish("a");
    await vi.advanceTimersByTimeAsync(0);
    expect(said.slice(3)).toEqual([`claim 1 wait 20000 at ${t0}`, `run c sent ${t0 + 1}`]);
    stop();
    await expect(loop).resolves.toBeNull();
  });

  it("a failed claim backs off 100 ms, doubling to 5 s, and the first answer resets it", async () => {
    const t0 = Date.now();
    const { deps, said, stop } = loopOf(1, (n) => {
      if (n < 8 || n === 9) throw new TypeError("fetch failed");
      if (n === 8) return { jobs: [], since: [] };
      return new Promise<Claimed>(() => {});
    });
    const loop = claimLoop(deps);
    await vi.advanceTimersByTimeAsync(20_000);
    const at = said.filter((s) => s.startsWith("claim")).map((s) => Number(s.split(" at ")[1]) - t0);
    // 100, 200, 400 … 5000 (capped) after each failure; the empty answer at the ninth claim resets it to 100.
    expect(at.slice(1).map((t, i) => t - at[i]!)).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 0, 100]);
    expect(said.filter((s) => s === "log worker:claim_failed")).toHaveLength(9);
    stop();
    void loop;
  });

  it("a refusal no retry can change ends the loop with it", async () => {
    const { deps, said } = loopOf(1, () => {
      throw new Error("HTTP 401");
    });
    await expect(claimLoop(deps)).resolves.toEqual(new Error("refused for good"));
    expect(said.filter((s) => s.startsWith("claim"))).toHaveLength(1);
    expect(said).toContain("log worker:stopped");
  });

  it("a claim answered after stop() was called: its jobs are released, not run", async () => {
    let answer!: (c: Claimed) => void;
    const { deps, said, stop } = loopOf(2, () => new Promise<Claimed>((resolve) => (answer = resolve)));
    const loop = claimLoop(deps);
    await vi.advanceTimersByTimeAsync(0);
    stop();
    answer({ jobs: [job("a"), job("b")], since: [0, 0] });
    await expect(loop).resolves.toBeNull();
    expect(said.slice(1)).toEqual(["release a", "release b"]);
  });

  it("a claim that fails because stop() ended it: the loop ends without a backoff or a log line", async () => {
    let fail!: (e: Error) => void;
    const { deps, said, stop } = loopOf(1, () => new Promise<Claimed>((_, reject) => (fail = reject)));
    const loop = claimLoop(deps);
    await vi.advanceTimersByTimeAsync(0);
    stop();
    fail(new DOMException("aborted", "AbortError"));
    await expect(loop).resolves.toBeNull();
    expect(said).toHaveLength(1);
  });
});
