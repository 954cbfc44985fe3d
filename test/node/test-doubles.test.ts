/**
 * The producer-side test doubles of `edgequeue/testing`, as a user's unit test
 * would use them: code that takes a QueueClient, given a fake or an inline one.
 */
import { RetryableJobError, TerminalJobError, type JobContext } from "edgequeue/handler";
import { createFakeQueue, createInlineQueue } from "edgequeue/testing";
import type { QueueClient } from "edgequeue";
import { describe, expect, it } from "vitest";

/** User code under test: signs a user up and asks for a welcome email, once per address. */
async function signUp(queue: QueueClient, email: string) {
  const { id, created } = await queue.enqueue({ type: "email.welcome", payload: { email }, id: `welcome-${email}`, delayMs: 1_000 });
  return { jobId: id, created };
}

describe("createFakeQueue", () => {
  it("records jobs, honours ids and live dedupe keys, and schedules delayed ones", async () => {
    const queue = createFakeQueue({ now: () => 1_000 });
    const first = await signUp(queue, "a@b.c");
    const again = await signUp(queue, "a@b.c");
    expect(first.created).toBe(true);
    expect(again).toEqual({ jobId: first.jobId, created: false });
    expect(queue.jobs).toHaveLength(1);
    expect(queue.jobs[0]).toMatchObject({ type: "email.welcome", payload: { email: "a@b.c" }, state: "pending", runAt: 2_000 });
    expect(await queue.stats("email.welcome")).toMatchObject({ pending: 0, scheduled: 1 });

    const k1 = await queue.enqueue({ type: "sync", payload: {}, dedupeKey: "acct-1" });
    const k2 = await queue.enqueue({ type: "sync", payload: {}, dedupeKey: "acct-1" });
    expect(k2).toEqual({ id: k1.id, job: k1.job, created: false });
    await queue.cancel(k1.id);
    expect((await queue.enqueue({ type: "sync", payload: {}, dedupeKey: "acct-1" })).created).toBe(true);
    // The newest wins under cancelRunning: the older job of the key is superseded, as on the queue.
    const r1 = await queue.enqueue({ type: "reindex", payload: { rev: 1 }, dedupeKey: "doc", dedupeMode: "cancelRunning" });
    const r2 = await queue.enqueue({ type: "reindex", payload: { rev: 2 }, dedupeKey: "doc", dedupeMode: "cancelRunning" });
    expect(r2.created).toBe(true);
    expect(await queue.get(r1.id)).toMatchObject({ state: "superseded", cancelReason: "superseded by a newer job of its key (cancelRunning)" });
    await expect(queue.enqueue({ type: "sync", payload: [] as never })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(queue.get("nope")).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("createFakeQueue: inline claims", () => {
  it("claimOrEnqueue leases when the key is free and queues a follower while it runs; runClaimed drains it", async () => {
    const queue = createFakeQueue();
    const handle = await queue.claimOrEnqueue({ type: "sync", payload: { n: 1 }, dedupeKey: "acct" });
    expect(handle).toMatchObject({ state: "running" });
    const ran: unknown[] = [];
    await queue.runClaimed(handle!, async (job) => {
      ran.push(job.payload.n);
      if (job.payload.n === 1) expect(await queue.claimOrEnqueue({ type: "sync", payload: { n: 2 }, dedupeKey: "acct" })).toBeNull();
      return {};
    });
    expect(ran).toEqual([1, 2]);
    expect(queue.jobs.map((j) => j.state)).toEqual(["completed", "completed"]);
  });
});

describe("createInlineQueue", () => {
  const handlers = {
    "email.welcome": async (payload: { email: string }, ctx: JobContext) => {
      const sent = await ctx.step("send", ({ idempotencyKey }) => ({ to: payload.email, key: idempotencyKey }));
      return sent;
    },
    flaky: async (_p: object, ctx: JobContext) => {
      if (ctx.attempt < 3) throw new RetryableJobError(`not yet (${ctx.attempt})`);
      return { attempt: ctx.attempt };
    },
    bad: async () => {
      throw new TerminalJobError("rejected address");
    },
  };

  it("runs each job through its handler in process, with the real ctx, retries and error mapping", async () => {
    const queue = createInlineQueue(handlers);
    const { jobId } = await signUp(queue, "x@y.z");
    expect(await queue.get(jobId)).toMatchObject({ state: "completed", attempts: 1, result: { to: "x@y.z", key: `${jobId}:send` } });
    const { job: flaky } = await queue.enqueue({ type: "flaky", payload: {} });
    expect(flaky).toMatchObject({ state: "completed", attempts: 3, result: { attempt: 3 } });
    const { job: bad } = await queue.enqueue({ type: "bad", payload: {} });
    expect(bad).toMatchObject({ state: "failed", failureKind: "fatal", attempts: 1, lastError: "rejected address" });
    // A type with no handler here stays pending, as a pulled type would.
    expect((await queue.enqueue({ type: "elsewhere", payload: {} })).job?.state).toBe("pending");
  });
});
