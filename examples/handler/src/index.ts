/**
 * The example handler Worker. `DemoHandlers` is the entrypoint the queue's
 * `DEMO` binding points at; each demo type shows one way an attempt can end.
 */
import { batch, defineHandlers, TerminalJobError } from "edgequeue/handler";
import { stepHandlers } from "./steps";
import { workflowHandler } from "edgequeue/workflows";
import { DemoWorkflow } from "./workflow";

declare module "edgequeue" {
  interface JobTypes {
    "demo.noop": Record<string, never>;
    "demo.echo": Record<string, unknown>;
    "demo.fail": Record<string, never>;
    "demo.fatal": Record<string, never>;
    "demo.sleep": { ms: number };
    "demo.flaky": { failTimes: number };
    // The guards (each sleeps payload.ms): see the queue's wrangler.toml for what holds each back.
    "demo.serial": { ms: number };
    "demo.pooled.a": { ms: number };
    "demo.pooled.b": { ms: number };
    "demo.single": { ms: number };
    "demo.import": { ms: number };
    "demo.hydrate": { ms: number };
    "demo.ingest": { ms: number };
    "demo.rollup": { ms: number };
    "demo.rated": { ms: number };
    "demo.fair": { ms: number };
    // Limits per tenant (a keyed concurrency and a keyed rate): sleep payload.ms if given.
    "demo.tenant": { tenant: string; ms?: number };
    "demo.tenant.rated": { tenant: string; ms?: number };
    // A batch handler: up to 10 jobs in one call, gathered for at most 500 ms.
    "demo.digest": Record<string, unknown>;
    // Reports ctx.progress(100 * i / steps) every `ms` for `steps` steps, then returns {done: true}.
    "demo.progress": { steps: number; ms: number };
    // A depth cap (maxDepth = 5 pending per object): sleeps payload.ms if given.
    "demo.capped": { ms?: number };
    // Writes payload.lines ctx.log lines, kept with the job (GET /v1/jobs/{id}/logs).
    "demo.log": { lines: number };
    // Sensitive values (docs/operating.md): the whole type, and one step of a type that is not.
    "demo.sensitive": Record<string, unknown>;
    "demo.sensitive.step": { token: string };
    // A Cloudflare Workflows class (workflow.ts).
    "demo.workflow": { orderId?: string; items?: number };
    // Event consumers (topic demo.topic).
    "demo.consumer.ok": Record<string, unknown>;
    "demo.consumer.bad": Record<string, unknown>;
    // Schedules.
    "demo.tick": Record<string, unknown>;
  }
}

/** A guarded demo job: sleeps payload.ms and reports when it ran, so the guards can be seen (and checked) from the results. */
async function span(payload: { ms: number }, ctx: { signal: AbortSignal }) {
  const startedAt = Date.now();
  await sleep(payload.ms, ctx.signal);
  return { startedAt, finishedAt: Date.now() };
}

/** sleep that ends early, with the signal's reason, when the queue aborts the job. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    // No wait, no timer: under load a workerd timer of 0 ms fires tens of ms late, which a demo of no wait must not add.
    if (!(ms > 0)) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

export const DemoHandlers = defineHandlers({
  ...stepHandlers,
  /** Completes at once; the result says when the handler started (the benchmark reads it). */
  "demo.noop": () => ({ startedAt: Date.now() }),
  "demo.echo": (payload) => payload,
  "demo.fail": () => {
    throw new Error("demo failure");
  },
  "demo.fatal": () => {
    throw new TerminalJobError("demo fatal failure: retrying cannot help");
  },
  "demo.sleep": async (payload, ctx) => {
    await sleep(payload.ms, ctx.signal);
    return { sleptMs: payload.ms };
  },
  "demo.flaky": (payload, ctx) => {
    if (ctx.attempt <= payload.failTimes) throw new Error(`flaky: failing attempt ${ctx.attempt} of the first ${payload.failTimes}`);
    ctx.log("flaky job succeeded", { attempt: ctx.attempt });
    return { succeededOnAttempt: ctx.attempt };
  },
  "demo.serial": span,
  "demo.pooled.a": span,
  "demo.pooled.b": span,
  "demo.single": span,
  "demo.import": span,
  "demo.hydrate": span,
  "demo.ingest": span,
  "demo.rollup": span,
  "demo.rated": span,
  "demo.fair": span,
  "demo.tenant": (payload, ctx) => span({ ms: payload.ms ?? 0 }, ctx),
  "demo.tenant.rated": (payload, ctx) => span({ ms: payload.ms ?? 0 }, ctx),
  // One call for the batch: each job's result says how big its batch was and where it stood in it.
  "demo.digest": batch<"demo.digest">((jobs) => jobs.map((_, index) => ({ batchSize: jobs.length, index }))),
  "demo.progress": async (payload, ctx) => {
    for (let i = 1; i <= payload.steps; i++) {
      await sleep(payload.ms, ctx.signal);
      await ctx.progress((100 * i) / payload.steps);
    }
    return { done: true };
  },
  "demo.capped": (payload, ctx) => span({ ms: payload.ms ?? 0 }, ctx),
  "demo.log": (payload, ctx) => {
    for (let i = 1; i <= payload.lines; i++) ctx.log(`line ${i} of ${payload.lines}`, { i });
    return { lines: payload.lines };
  },
  /**
   * Marked `sensitive` (wrangler.toml): its payload, result, step and log line are the handler's alone — the API, the
   * dashboard, subscriptions and callbacks read "[redacted]" (docs/operating.md "Sensitive values").
   */
  "demo.sensitive": async (payload, ctx) => {
    const kept = await ctx.step("keep", () => ({ keys: Object.keys(payload).length, payload }));
    ctx.log("handled the sensitive payload", { payload });
    return { ...payload, steppedKeys: kept.keys };
  },
  /** A type that is not sensitive, with one step that is: its token reads "[redacted]", the rest is shown. */
  "demo.sensitive.step": async (payload, ctx) => {
    const token = await ctx.step("token", () => ({ token: payload.token }), { sensitive: true });
    const shown = await ctx.step("shown", () => ({ length: token.token.length }));
    return { tokenLength: shown.length };
  },
  /** A Cloudflare Workflows class, its import changed to edgequeue/workflows (docs/coming-from/workflows.md). */
  "demo.workflow": workflowHandler(DemoWorkflow),
  "demo.consumer.ok": (payload, ctx) => ({ handled: ctx.id, keys: Object.keys(payload), event: ctx.event }),
  "demo.consumer.bad": () => {
    throw new Error("demo consumer failure");
  },
  /** Fired by a schedule: says which slot it was for. */
  "demo.tick": (_payload, ctx) => ({ scheduledFor: ctx.scheduledFor, ranAt: Date.now() }),
});

export default {
  fetch: () => new Response("edgequeue example handler: jobs arrive over the service binding, not HTTP", { status: 404 }),
};
