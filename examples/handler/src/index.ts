/**
 * The example handler Worker. `DemoHandlers` is the entrypoint the queue's
 * `DEMO` binding points at; each demo type shows one way an attempt can end.
 */
import { defineHandlers, TerminalJobError } from "edgequeue/handler";

declare module "edgequeue" {
  interface JobTypes {
    "demo.noop": Record<string, never>;
    "demo.echo": Record<string, unknown>;
    "demo.fail": Record<string, never>;
    "demo.fatal": Record<string, never>;
    "demo.sleep": { ms: number };
    "demo.flaky": { failTimes: number };
  }
}

/** sleep that ends early, with the signal's reason, when the queue aborts the job. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

export const DemoHandlers = defineHandlers({
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
});

export default {
  fetch: () => new Response("edgequeue example handler: jobs arrive over the service binding, not HTTP", { status: 404 }),
};
