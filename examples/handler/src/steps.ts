/**
 * The durable-steps demo types (docs/handlers.md "Durable steps"). A module of their own
 * that imports only `edgequeue/handler`'s errors and types, so plain Node tests
 * can run them with `edgequeue/testing` (test/node/testing-kit.test.ts).
 */
import type { Handlers } from "edgequeue/handler";

declare module "edgequeue" {
  interface JobTypes {
    "demo.steps": { failAfter?: "reserve" | "charge" | "ship" };
    "demo.diverge": Record<string, never>;
    "demo.nap": { ms: number };
    "demo.noop.step": Record<string, never>;
    "demo.approve": { timeoutMs?: number };
    "demo.token": { timeoutMs?: number };
    "demo.parent": { n: number; scoped?: boolean };
    "demo.compensate": { job: { id: string } };
    "demo.await.paid": { orderId: string; timeoutMs?: number };
  }
}

export const stepHandlers = {
  /**
   * Three steps, each returning the attempt it ran in; on attempt 1 it throws right after the step
   * `failAfter` names. After `failAfter: "charge"` the result is {reserve: 1, charge: 1, ship: 2}:
   * the retry replays reserve and charge from the journal and runs only ship.
   */
  "demo.steps": async (payload, ctx) => {
    const ran: Record<string, number> = {};
    for (const name of ["reserve", "charge", "ship"] as const) {
      ran[name] = await ctx.step(name, () => ctx.attempt);
      if (ctx.attempt === 1 && payload.failAfter === name) throw new Error(`demo.steps: failing after ${name} on attempt 1`);
    }
    return ran;
  },
  /** Its second step is named after the attempt, so a retry finds another name where the journal has one: NondeterminismError. */
  "demo.diverge": async (_payload, ctx) => {
    await ctx.step("first", () => "same every time");
    await ctx.step(`second-on-attempt-${ctx.attempt}`, () => ctx.attempt);
    if (ctx.attempt === 1) throw new Error("demo.diverge: failing on attempt 1, so attempt 2 replays");
    return { attempt: ctx.attempt };
  },
  /** A durable sleep: the job goes back to pending for `ms` and then completes, measuring from the journaled time before it slept. */
  "demo.nap": async (payload, ctx) => {
    const from = await ctx.step("before-nap", () => Date.now());
    await ctx.sleep("nap", payload.ms);
    return { sleptMs: Date.now() - from };
  },
  /** demo.noop with one journaled no-op step: the benchmark's measure of what a step costs (bench/run.mjs stepCost). */
  "demo.noop.step": async (_payload, ctx) => {
    await ctx.step("noop", () => null);
    return { startedAt: Date.now() };
  },
  /**
   * Waits for the signal `approve` (POST /v1/jobs/{id}/signals/approve {"data": …}), holding nothing while it waits;
   * null when `timeoutMs` passes first (docs/workflows.md).
   */
  "demo.approve": async (payload, ctx) => {
    const signal = await ctx.waitForSignal("approve", payload.timeoutMs === undefined ? {} : { timeoutMs: payload.timeoutMs });
    // resumedAt: when this attempt got past the wait (the bench's signalWakeP50Ms).
    return { approved: signal === null ? null : signal.data, resumedAt: Date.now() };
  },
  /**
   * Makes the wait token `ok` (its path is in the job's journal: GET /v1/jobs/{id}/steps) and waits for someone to
   * POST {"data": …} to it, with no queue token.
   */
  "demo.token": async (payload, ctx) => {
    const token = await ctx.createWaitToken("ok", payload.timeoutMs === undefined ? {} : { timeoutMs: payload.timeoutMs });
    const done = await ctx.waitForToken(token);
    return { data: done === null ? null : done.data };
  },
  /**
   * Invokes `n` demo.echo children with {"i"} (a fan-out: all enqueued at once, the parent waiting, holding
   * nothing) and returns their results in order once every one has ended (docs/workflows.md "Child jobs").
   * `scoped`: the children go in the parent's scope (its own object) rather than among demo.echo's unscoped jobs.
   */
  "demo.parent": async (payload, ctx) => {
    const scope = payload.scoped && ctx.scope ? { scope: ctx.scope } : {};
    const results = await Promise.all(Array.from({ length: payload.n }, (_, i) => ctx.invoke(`item-${i}`, { type: "demo.echo", payload: { i }, ...scope })));
    return { results };
  },
  /**
   * Waits for an event on topic `order.paid` with the same orderId (POST /v1/topics/order.paid/events {"payload":
   * {"orderId": …}}), holding nothing, and returns the event's payload as its result; no result (null) when
   * `timeoutMs` passes first.
   */
  "demo.await.paid": async (payload, ctx) => {
    const event = await ctx.waitForEvent("order.paid", { match: { orderId: payload.orderId }, ...(payload.timeoutMs === undefined ? {} : { timeoutMs: payload.timeoutMs }) });
    return event === null ? null : event.payload;
  },
  /** demo.fatal's failure handler (onFailure): enqueued once per failed job with its view (docs/workflows.md "Failure handlers"). */
  "demo.compensate": (payload) => ({ compensated: payload.job.id }),
} satisfies Handlers;
