/**
 * pull-worker/completions.ts on vitest's fake clock, with a stand-in `Call`:
 * completions of one moment go in one request; while the loop waits for a slot
 * they are handed to its next claim instead; a refusal per item deposes that
 * attempt.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Completions, type Completing } from "../../../src/pull-worker/completions";
import { fakeCall, leasedJob } from "./fake-queue-api";

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

function completions(answer: Parameters<typeof fakeCall>[0], loopWaiting = false) {
  const { call, calls } = fakeCall(answer);
  const handed: string[][] = [];
  const lines: Record<string, unknown>[] = [];
  const c = new Completions<A>({ call, log: (l) => lines.push(l), loopWaiting: () => loopWaiting, handedOver: (sent) => handed.push(sent.map((q) => q.a.job.id)) });
  return { c, calls, handed, lines };
}

const allOk = (c: { body?: Record<string, unknown> }) => ({ results: (c.body!.items as { id: string }[]).map((i) => ({ id: i.id, ok: true })) });
const line = { at: 1, attempt: 1, message: "hi", fields: {} };

describe("Completions", () => {
  it("completions of one moment go in one POST /v1/jobs/complete, each item with its result and lines; each resolves once answered", async () => {
    const { c, calls } = completions(allOk);
    const [a, b] = [attempt("a"), attempt("b")];
    const answered: string[] = [];
    void c.soon(a, { n: 1 }, [line]).then(() => answered.push("a"));
    void c.soon(b, undefined, undefined).then(() => answered.push("b"));
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.map((x) => [x.path, x.body])).toEqual([["/v1/jobs/complete", { items: [{ id: "a", leaseToken: "token-a", result: { n: 1 }, logs: [line] }, { id: "b", leaseToken: "token-b" }] }]]);
    expect(answered).toEqual(["a", "b"]);
  });

  it("while the loop waits for a slot, they are handed to its next claim (take), unanswered until that claim is", async () => {
    const { c, calls, handed } = completions(allOk, true);
    const [a, b] = [attempt("a"), attempt("b")];
    let answered = 0;
    void c.soon(a, { n: 1 }, undefined).then(() => answered++);
    void c.soon(b, undefined, undefined).then(() => answered++);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual([]);
    expect(handed).toEqual([["a", "b"]]);
    const carried = c.take();
    expect(c.items(carried)).toEqual([{ id: "a", leaseToken: "token-a", result: { n: 1 } }, { id: "b", leaseToken: "token-b" }]);
    expect(c.take()).toEqual([]);
    expect(answered).toBe(0);
    for (const q of carried) q.resolve();
    await Promise.resolve();
    expect(answered).toBe(2);
  });

  it("an item answered lease_lost or already_terminal deposes its attempt; another refusal is logged; an attempt no longer live is not sent", async () => {
    const { c, calls, lines } = completions(() => ({
      results: [
        { id: "a", ok: false, error: { code: "lease_lost", message: "gone" } },
        { id: "b", ok: false, error: { code: "already_terminal", message: "done" } },
        { id: "c", ok: false, error: { code: "internal", message: "boom" } },
      ],
    }));
    const [a, b, cc, d] = [attempt("a"), attempt("b"), attempt("c"), attempt("d")];
    d.live = false;
    await Promise.all([c.soon(a, undefined, undefined), c.soon(b, undefined, undefined), c.soon(cc, undefined, undefined), c.soon(d, undefined, undefined), vi.advanceTimersByTimeAsync(0)]);
    expect((calls[0]!.body!.items as { id: string }[]).map((i) => i.id)).toEqual(["a", "b", "c"]);
    expect([a.live, b.live, cc.live]).toEqual([false, false, true]);
    expect(lines).toEqual([{ event: "worker:write_failed", id: "c", path: "complete", error: "boom" }]);
  });

  it("a request that fails is logged per job, and each completion still resolves", async () => {
    const { c, lines } = completions(() => {
      throw new TypeError("fetch failed");
    });
    await Promise.all([c.soon(attempt("a"), undefined, undefined), vi.advanceTimersByTimeAsync(0)]);
    expect(lines).toEqual([{ event: "worker:write_failed", id: "a", path: "complete", error: "TypeError: fetch failed" }]);
  });
});
