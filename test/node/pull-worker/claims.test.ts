/**
 * pull-worker/claims.ts with a stand-in `Call`: a claim carries the completions
 * handed to it (answered with it, or sent again alone when it fails), a claim
 * without any may wait, stop() ends only a waiting one (unless its answer is
 * arriving: pull-worker/api.ts), and its deadline ends any.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Claims } from "../../../src/pull-worker/claims";
import { Completions, type Completing } from "../../../src/pull-worker/completions";
import { fakeCall, leasedJob, refusal, type CallMade } from "./fake-queue-api";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function attempt(id: string) {
  const a = { job: leasedJob(id, "t", 0, 30_000), live: true, lost: () => void (a.live = false) };
  return a satisfies Completing;
}
type A = ReturnType<typeof attempt>;

/** Claims whose completions are always handed over (the loop is waiting); `answer` answers every call. */
function claimsOf(answer: (c: CallMade) => unknown) {
  const { call, calls } = fakeCall(answer);
  const completions = new Completions<A>({ call, log: () => {}, loopWaiting: () => true, handedOver: () => {} });
  const claims = new Claims<A>({ call, completions, body: { worker: "w1", types: ["t"], leaseMs: 6_000 } });
  /** Completes these attempts now: handed to the next claim. */
  const complete = async (...as: A[]) => {
    const answered = as.map((a) => completions.soon(a, { id: a.job.id }, undefined));
    await vi.advanceTimersByTimeAsync(0);
    return answered;
  };
  return { claims, completions, calls, complete };
}

/** A call that never answers until its signals end it, as fetch does. */
const hang = (c: CallMade) =>
  new Promise((_, reject) => {
    c.options?.signal?.addEventListener("abort", () => reject(new DOMException("cut off", "AbortError")));
    c.options?.untilAnswered?.addEventListener("abort", () => reject(new DOMException("ended", "AbortError")));
  });

describe("Claims", () => {
  it("a claim with nothing to carry asks to wait, says when it was sent, and is ended by stopWaiting()", async () => {
    const { claims, calls } = claimsOf((c) => (c.body!.waitMs ? hang(c) : { jobs: [leasedJob("j", "t", 0, 6_000)] }));
    const sentAt = Date.now();
    expect(await claims.claim(3, 0)).toEqual({ jobs: [leasedJob("j", "t", 0, 6_000)], since: [sentAt] });
    expect(calls[0]!.body).toEqual({ worker: "w1", types: ["t"], leaseMs: 6_000, limit: 3 });
    const waiting = claims.claim(3, 20_000);
    await Promise.resolve();
    expect(calls[1]!.body).toEqual({ worker: "w1", types: ["t"], leaseMs: 6_000, limit: 3, waitMs: 20_000 });
    claims.stopWaiting();
    await expect(waiting).rejects.toThrow("ended");
  });

  it("a claim carries the completions handed to it and answers them; stop() does not end it, its deadline (cutOff) does", async () => {
    const { claims, calls, complete } = claimsOf((c) => (c.body!.complete ? hang(c) : { jobs: [] }));
    const [a, b] = [attempt("a"), attempt("b")];
    b.live = false; // lost meanwhile: not carried
    const answered = await complete(a, b);
    const carrying = claims.claim(2, 20_000);
    await Promise.resolve();
    expect(calls[0]!.body).toEqual({ worker: "w1", types: ["t"], leaseMs: 6_000, limit: 2, complete: [{ id: "a", leaseToken: "token-a", result: { id: "a" } }] });
    claims.stopWaiting();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toHaveLength(1);
    claims.cutOff();
    await expect(carrying).rejects.toThrow("cut off");
    // Cut off, its completion went again alone; every completion handed to it is resolved.
    expect(calls.map((c) => c.path)).toEqual(["/v1/claim", "/v1/jobs/complete"]);
    await Promise.all(answered);
  });

  it("a carried completion answered lease_lost deposes its attempt", async () => {
    const { claims, complete } = claimsOf((c) => ({ jobs: [], completed: (c.body!.complete as { id: string }[]).map((i) => ({ id: i.id, ok: false, error: { code: "lease_lost", message: "gone" } })) }));
    const a = attempt("a");
    await complete(a);
    await claims.claim(1, 0);
    expect(a.live).toBe(false);
  });

  it("a claim carrying completions that fails: the completions go again alone, and the claim's failure is thrown", async () => {
    const { claims, calls, complete } = claimsOf((c) => {
      if (c.path === "/v1/claim") throw refusal("internal", "boom", 500);
      return { results: [{ id: "a", ok: true }] };
    });
    await complete(attempt("a"));
    await expect(claims.claim(1, 0)).rejects.toThrow("boom");
    expect(calls.map((c) => c.path)).toEqual(["/v1/claim", "/v1/jobs/complete"]);
  });

  it("a job a waiting claim got keeps the rest of its lease: its start is the send time plus how long after the claim arrived it was leased (askedAt)", async () => {
    const queueClock = Date.now() + 3_600_000; // the queue's clock is an hour off: only its differences count
    const { claims } = claimsOf(async () => {
      await new Promise((r) => setTimeout(r, 25_000)); // the claim waits 25 s; the job is leased as the wait ends
      return { jobs: [leasedJob("j", "t", queueClock + 24_800, 30_000)], askedAt: queueClock - 100, answeredAt: queueClock + 24_850 };
    });
    const sentAt = Date.now();
    const claimed = claims.claim(1, 30_000);
    await vi.advanceTimersByTimeAsync(25_000);
    // Leased 24.9 s after the claim arrived, by the queue's clock: no earlier than 24.9 s after it was sent, by this one.
    expect((await claimed).since).toEqual([sentAt + 24_900]);
  });

  it("a slow answer's way back is not counted as lease left: the start is placed from the send, not from the answer's arrival", async () => {
    const queueClock = Date.now() - 7_200_000;
    const { claims } = claimsOf(async () => {
      await new Promise((r) => setTimeout(r, 8_000)); // 8 s of network on the way back; the queue answered at once
      return { jobs: [leasedJob("j", "t", queueClock + 5, 30_000)], askedAt: queueClock, answeredAt: queueClock + 10 };
    });
    const sentAt = Date.now();
    const claimed = claims.claim(1, 0);
    await vi.advanceTimersByTimeAsync(8_000);
    // The answer's formula of 0.1.0 (arrival − (answeredAt − startedAt)) would have said sentAt + 7,995: eight seconds
    // the queue had already counted.
    expect((await claimed).since).toEqual([sentAt + 5]);
  });

  it("from a queue that does not say when the claim arrived, the send time (safe, but the wait is lost)", async () => {
    const { claims } = claimsOf(async () => ({ jobs: [leasedJob("j", "t", 0, 30_000)], answeredAt: 20 }));
    const sentAt = Date.now();
    expect((await claims.claim(1, 0)).since).toEqual([sentAt]);
  });
});
