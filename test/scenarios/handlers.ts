/**
 * The scenarios' handlers (test/scenarios): written once, run by both backends — pushed by the real queue through the
 * test handler Worker (test/fixtures/handler/index.ts spreads them into its TestHandlers; their types are declared
 * with `binding = "TEST"` in vitest.config.mts), and in process by edgequeue/testing's runJob.
 *
 * Plain functions over `ctx` only: no `cloudflare:*` import, so the same module loads in workerd and in Node. What a
 * scenario checks comes back in a result or the journal, never through a side channel (the handler Worker's module
 * state is not the test's): a step journals the attempt that ran it, so a replayed step shows the earlier attempt.
 */
import type { AnyHandler, JobContext } from "../../src/runtime/context";
import { ChildJobFailedError, RetryableJobError, TerminalJobError } from "../../src/runtime/errors";

/** The topic the event scenarios wait on (declared in vitest.config.mts, no consumers). */
export const SCENARIO_TOPIC = "scenario.paid";
/** The ordered (FIFO) type of the guard scenarios (vitest.config.mts: `ordered: true`). */
export const ORDERED_TYPE = "scenario.ordered";

/** How often each job's handler ran, by job id: every run counts, a replay too (a run that gives its attempt back is not an attempt). */
const runs = new Map<string, number>();
function countRun(id: string): number {
  const n = (runs.get(id) ?? 0) + 1;
  runs.set(id, n);
  return n;
}

const timeout = (ms: number | undefined) => (ms === undefined ? {} : { timeoutMs: ms });

export const scenarioHandlers: Record<string, AnyHandler> = {
  /** Two steps, each journaling the attempt that ran it; `failOnce`: the first attempt throws between them. */
  "scenario.steps": async (p: { failOnce?: boolean }, ctx: JobContext) => {
    const a = await ctx.step("a", () => ({ ranOn: ctx.attempt }));
    if (p.failOnce && ctx.attempt === 1) throw new Error("fails once, after step a");
    const b = await ctx.step("b", () => ({ ranOn: ctx.attempt }));
    return { a, b };
  },

  /**
   * Fails until attempt `succeedOn` (an Error: retried while attempts remain); `fatal`: a TerminalJobError;
   * `giveBack`: the first n runs throw a RetryableJobError that gives its attempt back, after `retryAfterMs`.
   */
  "scenario.retry": async (p: { succeedOn?: number; fatal?: boolean; giveBack?: number; retryAfterMs?: number }, ctx: JobContext) => {
    const run = countRun(ctx.id);
    if (p.fatal) throw new TerminalJobError("fatal: not worth a retry");
    if (p.giveBack !== undefined && run <= p.giveBack) throw new RetryableJobError(`not now (run ${run})`, { consumesAttempt: false, retryAfterMs: p.retryAfterMs });
    if (ctx.attempt < (p.succeedOn ?? 1)) throw new Error(`not yet (attempt ${ctx.attempt})`);
    return { attempt: ctx.attempt, runs: run };
  },

  /** Answers its payload (the key scenarios: which payload ran). */
  "scenario.echo": (p: Record<string, unknown>) => ({ echo: p }),

  /** A step, then a wait for each signal of `names` in turn (each with `timeoutMs`); answers what each wait got. */
  "scenario.signals": async (p: { names: string[]; timeoutMs?: number }, ctx: JobContext) => {
    const prepared = await ctx.step("prepare", () => ({ ranOn: ctx.attempt }));
    const got: Record<string, unknown> = {};
    for (const name of p.names) got[name] = await ctx.waitForSignal(name, timeout(p.timeoutMs));
    return { prepared, got };
  },

  /** A wait token "approval" (expiring after `timeoutMs`), then, with `readyFirst`, a signal "ready", then the token's wait. */
  "scenario.token": async (p: { timeoutMs?: number; readyFirst?: boolean }, ctx: JobContext) => {
    const token = await ctx.createWaitToken("approval", timeout(p.timeoutMs));
    if (p.readyFirst) await ctx.waitForSignal("ready");
    const answer = await ctx.waitForToken(token);
    return { answer, expires: token.expiresAt !== null };
  },

  /**
   * Waits for an event on SCENARIO_TOPIC matching `orderId` (`timeoutMs`); `twice`: then, after a sleep of a second,
   * for another one — so the second wait begins after the first event (the queue's registry hands a wait the events
   * of the topic from the moment it began, that moment included).
   */
  "scenario.event": async (p: { orderId: string; timeoutMs?: number; twice?: boolean }, ctx: JobContext) => {
    const wait = async () => {
      const paid = await ctx.waitForEvent(SCENARIO_TOPIC, { match: { orderId: p.orderId }, ...timeout(p.timeoutMs) });
      return paid && { id: paid.id, topic: paid.topic, payload: paid.payload };
    };
    const first = await wait();
    if (!p.twice) return { first };
    await ctx.sleep("pause", 1_000);
    return { first, second: await wait() };
  },

  /** Invokes a `scenario.retry` child with `child` as its payload, in the parent's scope; catches its failure. */
  "scenario.parent": async (p: { child: Record<string, unknown> }, ctx: JobContext) => {
    try {
      const result = await ctx.invoke("child", { type: "scenario.retry", payload: p.child, ...(ctx.scope ? { scope: ctx.scope } : {}) });
      return { result };
    } catch (e) {
      if (!(e instanceof ChildJobFailedError)) throw e;
      return { caught: { step: e.step, state: e.state, failureKind: e.failureKind, error: e.error } };
    }
  },

  /** A step, a sleep of `ms`, a step. */
  "scenario.sleep": async (p: { ms: number }, ctx: JobContext) => {
    const before = await ctx.step("before", () => ({ ranOn: ctx.attempt }));
    await ctx.sleep("nap", p.ms);
    const after = await ctx.step("after", () => ({ ranOn: ctx.attempt }));
    return { before, after };
  },

  /** Never answers: runs until the queue aborts it (its timeout, a cancel). */
  "scenario.hang": async (_p: unknown, ctx: JobContext) =>
    new Promise((_resolve, reject) => {
      if (ctx.signal.aborted) reject(ctx.signal.reason);
      ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
    }),

  /** FIFO: `failFirst` fails its first attempt (so it stays its type's head while it waits out its backoff). */
  [ORDERED_TYPE]: async (p: { n: number; failFirst?: boolean }, ctx: JobContext) => {
    if (p.failFirst && ctx.attempt === 1) throw new Error(`head ${p.n} fails once`);
    return { n: p.n };
  },
};
