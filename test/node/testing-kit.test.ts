/**
 * `edgequeue/testing` used the way a handler author would: in plain Node (no
 * workerd, no queue), on the example handler's stepped demo types, importing
 * the package by name.
 */
import { batch, ChildJobFailedError, RetryableJobError, TerminalJobError, type JobContext } from "edgequeue/handler";
import { createFakeQueue, createInlineQueue, runJob } from "edgequeue/testing";
import { describe, expect, it } from "vitest";
import { stepHandlers } from "../../examples/handler/src/steps";

describe("errors a handler wraps", () => {
  it("TerminalJobError(message, { cause }) keeps the cause in the job's error; RetryableJobError too", async () => {
    const terminal = await runJob(async () => {
      throw new TerminalJobError("charge failed", { cause: new TypeError("fetch failed", { cause: "ECONNRESET" }) });
    }, {});
    expect(terminal.state).toBe("failed");
    expect(terminal.outcome).toMatchObject({ kind: "failed", error: "charge failed; caused by TypeError: fetch failed; caused by string: ECONNRESET" });
    const retry = await runJob(async () => {
      throw new RetryableJobError("rate limited", { retryAfterMs: 1_000, cause: new Error("429") });
    }, {});
    expect(retry.outcome).toMatchObject({ kind: "retry", error: "rate limited; caused by Error: 429" });
  });
});

describe("a batch handler in the test kit", () => {
  it("runs a job as a batch of one: its entry is its result, an Error entry its failure", async () => {
    const digest = batch((jobs) => jobs.map((j, index) => ((j.payload as { bad?: boolean }).bad ? new TerminalJobError("bad one") : { batchSize: jobs.length, index, n: (j.payload as { n: number }).n })));
    expect((await runJob(digest, { n: 7 })).result).toEqual({ batchSize: 1, index: 0, n: 7 });
    expect((await runJob(digest, { bad: true })).outcome).toMatchObject({ kind: "failed", error: "bad one" });
  });
});

describe("ctx.patched", () => {
  /** A handler whose code a test swaps between attempts, as a deploy does: b, or b2 behind ctx.patched. */
  function deployable() {
    const code = { patched: false };
    const handler = async (_p: object, ctx: JobContext) => {
      await ctx.step("a", () => 1);
      const path = code.patched && (await ctx.patched("use-b2")) ? await ctx.step("b2", () => "new") : await ctx.step("b", () => "old");
      await ctx.step("c", () => 3);
      return { path };
    };
    return { code, handler };
  }

  it("a run that journaled past the patch keeps its old path after the code changes", async () => {
    const { code, handler } = deployable();
    const run = await runJob(handler, {}, { crashAfter: "b" });
    code.patched = true;
    await run.resume();
    expect(run.result).toEqual({ path: "old" });
    expect(run.steps.map((s) => `${s.kind}:${s.name}`)).toEqual(["step:a", "step:b", "step:c"]);
  });

  it("a run that first reaches the patch on the new code journals it, and its replay answers the same", async () => {
    const { code, handler } = deployable();
    const run = await runJob(handler, {}, { crashAfter: "a" });
    code.patched = true;
    await run.resume();
    expect(run.result).toEqual({ path: "new" });
    expect(run.steps.map((s) => `${s.kind}:${s.name}`)).toEqual(["step:a", "patch:use-b2", "step:b2", "step:c"]);
    const again = await runJob(handler, {}, { crashAfter: "b2" });
    await again.resume();
    expect(again.result).toEqual({ path: "new" });
    expect(again.attempts).toBe(2);
  });
});

describe("ctx.event", () => {
  it("is the delivered event for a topic consumer (given to runJob), null otherwise", async () => {
    const consumer = async (_p: object, ctx: JobContext) => ({ event: ctx.event });
    expect((await runJob(consumer, {}, { event: { id: "e1", topic: "orders" } })).result).toEqual({ event: { id: "e1", topic: "orders" } });
    expect((await runJob(consumer, {})).result).toEqual({ event: null });
  });
});

describe("edgequeue/testing on the demo handlers", () => {
  it("crashAfter: the step is journaled, the attempt dies, and resume runs only what is left", async () => {
    const run = await runJob(stepHandlers, {}, { type: "demo.steps", crashAfter: "charge" });
    expect(run.outcome).toEqual({ kind: "crashed", step: "charge", when: "after" });
    expect(run.state).toBe("pending");
    await run.resume();
    expect(run.state).toBe("completed");
    expect(run.result).toEqual({ reserve: 1, charge: 1, ship: 2 });
    expect(run.steps.map((s) => [s.name, s.attempt])).toEqual([
      ["reserve", 1],
      ["charge", 1],
      ["ship", 2],
    ]);
    expect(run.attempts).toBe(2);
  });

  it("a failure after a step: settle() retries until done, replaying the journal", async () => {
    const run = await runJob(stepHandlers, { failAfter: "reserve" }, { type: "demo.steps" });
    expect(run.outcome).toMatchObject({ kind: "retry", error: "demo.steps: failing after reserve on attempt 1" });
    await run.settle();
    expect(run.result).toEqual({ reserve: 1, charge: 2, ship: 2 });
  });

  it("demo.diverge fails with NondeterminismError on its replay", async () => {
    const run = await runJob(stepHandlers, {}, { type: "demo.diverge" });
    await run.settle();
    expect(run.state).toBe("failed");
    // The failure kind the queue records for it (docs/state-machine.md).
    expect(run.failureKind).toBe("nondeterminism");
    expect(run.error).toMatch(/^NondeterminismError: step 1 is step "second-on-attempt-1" in the journal/);
  });

  it("demo.nap sleeps without spending an attempt; resume moves the clock to its wake time", async () => {
    const run = await runJob(stepHandlers, { ms: 90_000 }, { type: "demo.nap", now: 1_000_000 });
    expect(run.state).toBe("sleeping");
    expect(run.attempts).toBe(0);
    await run.resume();
    expect(run.state).toBe("completed");
    expect(run.now).toBe(1_090_000); // the run's clock moved to the wake time; Date.now() in the handler is the real one
    expect(typeof run.result?.sleptMs).toBe("number");
    expect(run.steps.map((s) => [s.name, s.kind, s.wakeAt])).toEqual([
      ["before-nap", "step", null],
      ["nap", "sleep", 1_090_000],
    ]);
  });
});

describe("edgequeue/testing on a handler of one's own", () => {
  /** A card charged through an outside API that dedupes by idempotency key (the kit's crashBefore shows why it must). */
  function checkout() {
    const charges = new Map<string, number>();
    const handler = async (payload: { order: number }, ctx: JobContext) => {
      ctx.log("checkout", { order: payload.order });
      const charge = await ctx.step("charge", ({ idempotencyKey }) => {
        charges.set(idempotencyKey, (charges.get(idempotencyKey) ?? 0) + 1);
        return { chargeId: `ch_${payload.order}` };
      });
      const receipt = await ctx.step("receipt", () => ({ id: ctx.uuid("receipt"), at: ctx.now() }));
      return { charge, receipt };
    };
    return { handler, charges };
  }

  it("crashBefore: the side effect happened but its result was not journaled, so resume runs it again with the same key", async () => {
    const { handler, charges } = checkout();
    const run = await runJob(handler, { order: 42 }, { id: "job-42", crashBefore: "charge" });
    expect(run.outcome).toEqual({ kind: "crashed", step: "charge", when: "before" });
    expect(run.steps).toEqual([]);
    await run.resume();
    expect(run.state).toBe("completed");
    expect([...charges]).toEqual([["job-42:charge", 2]]); // twice, under one key: the outside API must dedupe it
    expect(run.logs.map((l) => [l.attempt, l.message, l.fields])).toEqual([
      [1, "checkout", { order: 42 }],
      [2, "checkout", { order: 42 }],
    ]);
  });

  it("resumeWith: a code change that renames a started step is caught before it ships", async () => {
    const { handler } = checkout();
    const run = await runJob(handler, { order: 7 }, { crashAfter: "charge" });
    await run.resumeWith(async (_p: { order: number }, ctx: JobContext) => {
      await ctx.step("charge-card", () => ({}));
      return {};
    });
    expect(run.state).toBe("failed");
    expect(run.error).toMatch(/NondeterminismError: step 0 is step "charge" in the journal, but the code now calls step "charge-card"/);
  });

  it("an atMostOnce step that crashed before journaling is not run again", async () => {
    let runs = 0;
    const handler = async (_p: object, ctx: JobContext) => ctx.step("wire", () => ++runs, { atMostOnce: true });
    const run = await runJob(handler, {}, { crashBefore: "wire" });
    await run.resume();
    expect(run.state).toBe("failed");
    expect(run.error).toMatch(/step "wire" is atMostOnce: it started in attempt 1 and never journaled a result/);
    expect(runs).toBe(1);
  });
});

describe("edgequeue/testing: step options", () => {
  it("timeoutMs bounds one run of a step: past it the step throws and the attempt is retried", async () => {
    const handler = async (_p: object, ctx: JobContext) => {
      const seen = await ctx.step("slow", ({ signal }) => new Promise((resolve) => signal.addEventListener("abort", () => resolve("aborted"))), { timeoutMs: 30 });
      return { seen };
    };
    const run = await runJob(handler, {});
    expect(run.outcome).toMatchObject({ kind: "retry", error: 'step "slow" timed out after 30 ms' });
    expect(run.steps).toEqual([]);
  });
});

describe("edgequeue/testing: waits (docs/workflows.md)", () => {
  it("demo.approve waits; run.signal ends the wait and resume completes it with the data", async () => {
    const run = await runJob(stepHandlers, {}, { type: "demo.approve" });
    expect(run.state).toBe("waiting");
    expect(run.attempts).toBe(0);
    expect(run.steps).toEqual([expect.objectContaining({ kind: "signal", name: "approve", result: null, finishedAt: null })]);
    expect(run.signal("approve", { by: "ann" })).toBe("resumed");
    await run.resume();
    expect(run.state).toBe("completed");
    expect(run.result).toMatchObject({ approved: { by: "ann" } });
  });

  it("a signal sent before the first attempt is kept for the wait; a timeout answers null when resumed", async () => {
    const early = await runJob(stepHandlers, {}, { type: "demo.approve", signals: [{ name: "approve", data: "early" }] });
    expect(early.state).toBe("pending");
    await early.settle();
    expect(early.result).toMatchObject({ approved: "early" });

    const timed = await runJob(stepHandlers, { timeoutMs: 5_000 }, { type: "demo.approve", now: 1_000 });
    expect(timed.state).toBe("waiting");
    await timed.resume();
    expect(timed.now).toBe(6_000);
    expect(timed.result).toMatchObject({ approved: null });

    const forever = await runJob(stepHandlers, {}, { type: "demo.approve" });
    await expect(forever.resume()).rejects.toThrow(/no timeout: send it with run.signal/);
  });

  it("demo.token: completeToken ends the wait, once", async () => {
    const run = await runJob(stepHandlers, {}, { type: "demo.token" });
    expect(run.state).toBe("waiting");
    const token = run.steps.find((s) => s.kind === "token")!.result as { name: string; path: string };
    expect(token).toMatchObject({ name: "ok", path: expect.stringMatching(/^\/v1\/tokens\//) });
    expect(run.completeToken(token as never, { yes: true })).toBe("resumed");
    expect(() => run.completeToken("ok")).toThrow(/completed already/);
    await run.resume();
    expect(run.result).toEqual({ data: { yes: true } });
  });

  it("crashBefore a wait: the queue never heard of it, so the next attempt waits again", async () => {
    const run = await runJob(stepHandlers, {}, { type: "demo.approve", crashBefore: "approve" });
    expect(run.outcome).toMatchObject({ kind: "crashed", step: "approve", when: "before" });
    expect(run.steps).toEqual([]);
    await run.resume();
    expect(run.state).toBe("waiting");
    expect(run.attempts).toBe(1);
  });

  it("crashAfter a wait: the queue heard of it, so the job waits; a signal then resumes it and the replay goes past", async () => {
    const run = await runJob(stepHandlers, {}, { type: "demo.approve", crashAfter: "approve" });
    expect(run.outcome).toMatchObject({ kind: "crashed", step: "approve", when: "after" });
    expect(run.state).toBe("waiting");
    expect(run.steps).toEqual([expect.objectContaining({ name: "approve", kind: "signal", finishedAt: null })]);
    expect(run.signal("approve", "late")).toBe("resumed");
    await run.resume();
    expect(run).toMatchObject({ state: "completed", attempts: 1, result: { approved: "late" } });
  });

  it("tokens: a completion sent before the first attempt is kept for the token's wait", async () => {
    const run = await runJob(stepHandlers, {}, { type: "demo.token", tokens: [{ name: "ok", data: { early: true } }] });
    expect(run.state).toBe("pending");
    await run.resume();
    expect(run.result).toEqual({ data: { early: true } });
    expect(() => run.completeToken("ok")).toThrow(/completed already|is completed/);
  });

  it("crashBefore and crashAfter a wait token: made once, the same token on the next attempt", async () => {
    const before = await runJob(stepHandlers, {}, { type: "demo.token", crashBefore: "ok" });
    expect(before.outcome).toMatchObject({ kind: "crashed", step: "ok", when: "before" });
    expect(before.steps).toEqual([]);
    await before.resume();
    expect(before.state).toBe("waiting");
    const after = await runJob(stepHandlers, {}, { type: "demo.token", crashAfter: "ok" });
    expect(after.outcome).toMatchObject({ kind: "crashed", step: "ok", when: "after" });
    const made = after.steps[0]!.result;
    await after.resume();
    expect(after.state).toBe("waiting");
    expect(after.steps[0]!.result).toEqual(made);
    expect(after.steps.map((s) => s.kind)).toEqual(["token", "token_wait"]);
  });

  it("waits made together (Promise.all) are all journaled in call order, and all must end", async () => {
    const both = async (_p: object, ctx: JobContext) => {
      const [a, b] = await Promise.all([ctx.waitForSignal("a"), ctx.waitForSignal("b")]);
      return { a: a?.data, b: b?.data };
    };
    const run = await runJob(both, {});
    expect(run.steps.map((s) => [s.seq, s.name])).toEqual([
      [0, "a"],
      [1, "b"],
    ]);
    run.signal("b", 2);
    await run.resume();
    // b ended; a is still open: the replay waits on it again.
    expect(run.state).toBe("waiting");
    run.signal("a", 1);
    await run.resume();
    expect(run.result).toEqual({ a: 1, b: 2 });
  });
});

describe("edgequeue/testing: child jobs (docs/workflows.md)", () => {
  const echo = { "demo.echo": (payload: Record<string, unknown>) => payload };

  it("demo.parent with childHandlers: every child runs through its own runJob, and the parent gets their results in order", async () => {
    const run = await runJob(stepHandlers, { n: 3 }, { type: "demo.parent", childHandlers: echo });
    expect(run.state).toBe("pending");
    await run.settle();
    expect(run).toMatchObject({ state: "completed", result: { results: [{ i: 0 }, { i: 1 }, { i: 2 }] }, attempts: 1, runs: 2 });
    expect(run.children.map((c) => [c.step, c.type, c.state])).toEqual([
      ["item-0", "demo.echo", "completed"],
      ["item-1", "demo.echo", "completed"],
      ["item-2", "demo.echo", "completed"],
    ]);
    expect(run.children[0]!.id).toMatch(/^child-[0-9a-f]{32}-0$/);
    expect(run.steps.map((s) => s.kind)).toEqual(["invoke", "invoke", "invoke"]);
  });

  it("Promise.all over an open child and a failed one throws the failure at once: caught, the parent still waits for the open one; uncaught, it fails", async () => {
    const both = (ctx: JobContext) => Promise.all([ctx.invoke("slow", { type: "demo.echo", payload: {} }), ctx.invoke("bad", { type: "demo.echo", payload: {} })]);
    const catching = async (_p: object, ctx: JobContext) => {
      try {
        return { results: await both(ctx) };
      } catch (e) {
        return { caught: (e as ChildJobFailedError).step };
      }
    };
    const run = await runJob(catching, {}, { childResults: { bad: { state: "failed", error: "no" } } });
    expect(run.state).toBe("pending");
    await run.resume();
    // The handler caught the failure, but a parent completes only past the children it asked for.
    expect(run.state).toBe("waiting");
    run.endChild("slow", { result: { ok: 1 } });
    await run.resume();
    expect(run).toMatchObject({ state: "completed", result: { caught: "bad" } });

    // Rethrown after a step that takes real time (the open wait has reached the handler by then): still at once.
    const compensating = async (_p: object, ctx: JobContext) => {
      try {
        return { results: await both(ctx) };
      } catch (e) {
        await ctx.step("compensate", () => new Promise((r) => setTimeout(r, 5)));
        throw e;
      }
    };
    const rethrown = await runJob(compensating, {}, { maxAttempts: 1, childResults: { bad: { state: "failed", error: "no" } } });
    await rethrown.resume();
    expect(rethrown).toMatchObject({ state: "failed", error: expect.stringContaining('ctx.invoke "bad") failed') });
    expect(rethrown.steps.map((s) => s.name)).toEqual(["slow", "bad", "compensate"]);

    const uncaught = await runJob(async (_p: object, ctx: JobContext) => ({ results: await both(ctx) }), {}, { maxAttempts: 1, childResults: { bad: { state: "failed", error: "no" } } });
    await uncaught.resume();
    expect(uncaught).toMatchObject({ state: "failed", error: expect.stringContaining('ctx.invoke "bad") failed') });
    expect(uncaught.children.map((c) => [c.step, c.state])).toEqual([
      ["slow", "cancelled"],
      ["bad", "failed"],
    ]);
  });

  it("a child that fails throws ChildJobFailedError, which the parent may catch; one left open waits for endChild", async () => {
    const parent = async (_p: object, ctx: JobContext) => {
      try {
        await ctx.invoke("charge", { type: "pay", payload: {} });
        return { caught: null };
      } catch (e) {
        return { caught: e instanceof ChildJobFailedError ? [e.state, e.failureKind, e.error] : String(e) };
      }
    };
    const failed = await (await runJob(parent, {}, { childResults: { charge: { error: "card declined", failureKind: "fatal" } } })).settle();
    expect(failed.result).toEqual({ caught: ["failed", "fatal", "card declined"] });

    const open = await runJob(parent, {});
    expect(open.state).toBe("waiting");
    await expect(open.resume()).rejects.toThrow(/waits for its children "charge"/);
    expect(open.endChild("charge", { result: { paid: true } })).toBe("resumed");
    await open.settle();
    expect(open.result).toEqual({ caught: null });
  });

  it("crashBefore an invoke: the queue never heard of it, so the next attempt enqueues it (once)", async () => {
    const run = await runJob(stepHandlers, { n: 1 }, { type: "demo.parent", crashBefore: "item-0", childHandlers: echo });
    expect(run.outcome).toMatchObject({ kind: "crashed", step: "item-0", when: "before" });
    expect(run.children).toEqual([]);
    await run.settle();
    expect(run.result).toEqual({ results: [{ i: 0 }] });
    expect(run.children).toHaveLength(1);
  });
});

describe("edgequeue/testing: event waits (docs/workflows.md)", () => {
  it("demo.await.paid: run.emit ends the wait whose match the payload fits; other events pass it by", async () => {
    const run = await runJob(stepHandlers, { orderId: "o1" }, { type: "demo.await.paid" });
    expect(run.state).toBe("waiting");
    expect(run.emit("order.paid", { orderId: "o2" })).toBe(0);
    expect(run.emit("order.refunded", { orderId: "o1" })).toBe(0);
    expect(run.emit("order.paid", { orderId: "o1", amount: 3 })).toBe(1);
    await run.settle();
    expect(run.result).toEqual({ orderId: "o1", amount: 3 });
    expect(run.steps).toEqual([expect.objectContaining({ kind: "event", name: "order.paid" })]);
  });

  it("events: each is emitted once a wait it matches is open; one for another order stays unemitted", async () => {
    const run = await runJob(stepHandlers, { orderId: "o1" }, {
      type: "demo.await.paid",
      events: [
        { topic: "order.paid", payload: { orderId: "o2" } },
        { topic: "order.paid", payload: { orderId: "o1", amount: 5 }, id: "e1" },
      ],
    });
    expect(run.state).toBe("pending");
    expect(run.steps[0]).toMatchObject({ kind: "event", result: { id: "e1", topic: "order.paid", payload: { orderId: "o1", amount: 5 } } });
    await run.resume();
    expect(run.state).toBe("completed");
  });

  it("a timeout answers null; an event emitted before the wait ends nothing", async () => {
    const timed = await runJob(stepHandlers, { orderId: "o1", timeoutMs: 1000 }, { type: "demo.await.paid", now: 0 });
    await timed.resume();
    expect(timed).toMatchObject({ state: "completed", result: null, now: 1000 });
    const early = await runJob(stepHandlers, { orderId: "o1" }, { type: "demo.await.paid", crashBefore: "order.paid" });
    expect(early.emit("order.paid", { orderId: "o1" })).toBe(0);
    await early.resume();
    expect(early.state).toBe("waiting");
  });
});

describe("signals through the test doubles (docs/workflows.md)", () => {
  it("createInlineQueue: a job that waits is `waiting` until signal() resumes it; createFakeQueue records signals", async () => {
    const queue = createInlineQueue(stepHandlers);
    const { job } = await queue.enqueue({ type: "demo.approve", payload: {} });
    expect(job?.state).toBe("waiting");
    // A name it does not wait for is kept, and the answer says what it waits for, as the queue's does.
    const waits = [{ kind: "signal", name: "approve", until: null }];
    expect(job?.waitingFor).toEqual(waits);
    expect(await queue.signal(job!.id, "aprove", "typo")).toEqual({ id: job!.id, delivered: "kept", waitingFor: waits });
    expect(await queue.signal(job!.id, "approve", "ok")).toEqual({ id: job!.id, delivered: "resumed", waitingFor: null });
    expect(await queue.get(job!.id)).toMatchObject({ state: "completed", result: { approved: "ok" } });
    await expect(queue.signal(job!.id, "approve")).rejects.toMatchObject({ code: "already_terminal" });

    const fake = createFakeQueue();
    const queued = await fake.enqueue({ type: "demo.approve", payload: {}, dedupeKey: "k" });
    expect(await fake.signal({ type: "demo.approve", dedupeKey: "k" }, "approve", 1)).toEqual({ id: queued.id, delivered: "kept", waitingFor: null });
    expect(fake.signals).toEqual([{ id: queued.id, name: "approve", data: 1 }]);
  });
});
