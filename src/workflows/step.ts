/**
 * `step` as Cloudflare Workflows gives it to `run(event, step)`, over a job's context (docs/coming-from/workflows.md):
 * `step.do` is a durable step (`ctx.step`), `step.sleep` / `step.sleepUntil` a durable sleep (`ctx.sleep`), and
 * `step.waitForEvent(name, { type })` a wait for the signal named `type` (`ctx.waitForSignal`) — what an instance's
 * `sendEvent({ type, payload })` sends.
 *
 * @module
 */
import type { JobContext } from "../runtime/context";
import { TerminalJobError } from "../runtime/errors";
import { durationMs } from "./duration";
import { DeadlineError, withTimeout } from "../deadlines";

export type WorkflowDuration = number | `${number} ${string}`;
export type WorkflowBackoff = "constant" | "linear" | "exponential";

export interface WorkflowStepConfig {
  retries?: { limit: number; delay: WorkflowDuration; backoff?: WorkflowBackoff };
  timeout?: WorkflowDuration;
}

export interface WorkflowStepEvent<T> {
  payload: T;
  timestamp: Date;
  type: string;
}

/** Throw it from a step (or `run`) to fail the instance at once: no retry (Workflows' `NonRetryableError`). */
export class NonRetryableError extends TerminalJobError {}

const CONFIG_KEYS = new Set(["retries", "timeout"]);
const RETRY_KEYS = new Set(["limit", "delay", "backoff"]);

export class WorkflowStep {
  constructor(private readonly ctx: JobContext) {}

  /**
   * do: a durable step, journaled once it returns. With `retries`, a step that throws is tried again — up to `limit`
   * more times, `delay` apart (constant, linear or exponential) — inside this attempt; `timeout` bounds each try.
   */
  async do<T>(name: string, configOrFn: WorkflowStepConfig | (() => Promise<T> | T), maybeFn?: () => Promise<T> | T): Promise<T> {
    const fn = typeof configOrFn === "function" ? configOrFn : maybeFn;
    if (typeof fn !== "function") throw new TypeError(`step.do(${JSON.stringify(name)}): give the step's function, after its config if it has one`);
    const config = typeof configOrFn === "function" ? {} : checkConfig(name, configOrFn);
    const timeoutMs = config.timeout === undefined ? undefined : durationMs(config.timeout, `step.do(${JSON.stringify(name)}).timeout`);
    const retries = config.retries;
    const delayMs = retries ? durationMs(retries.delay, `step.do(${JSON.stringify(name)}).retries.delay`) : 0;
    return (await this.ctx.step(name, async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await bounded(Promise.resolve().then(fn), timeoutMs, name);
        } catch (e) {
          if (e instanceof NonRetryableError || !retries || attempt >= retries.limit) throw e;
          await sleep(backoff(retries.backoff ?? "exponential", delayMs, attempt), this.ctx.signal);
        }
      }
    })) as T;
  }

  /** sleep: a durable sleep — the instance holds nothing while it sleeps, and goes on from here after it. */
  sleep(name: string, duration: WorkflowDuration): Promise<void> {
    return this.ctx.sleep(name, durationMs(duration, `step.sleep(${JSON.stringify(name)})`));
  }

  /** sleepUntil: sleep until a time (a Date or epoch milliseconds). */
  sleepUntil(name: string, timestamp: Date | number): Promise<void> {
    const at = timestamp instanceof Date ? timestamp.getTime() : timestamp;
    if (typeof at !== "number" || !Number.isFinite(at)) throw new TypeError(`step.sleepUntil(${JSON.stringify(name)}): ${String(timestamp)} is not a Date or epoch milliseconds`);
    return this.ctx.sleep(name, Math.max(0, at - this.ctx.now()));
  }

  /**
   * waitForEvent: the event `sendEvent({ type, payload })` sends to this instance — the signal named `type` — as
   * `{ payload, timestamp, type }`; past `timeout` (default 24 hours, as Workflows') it throws.
   */
  async waitForEvent<T = unknown>(name: string, options: { type: string; timeout?: WorkflowDuration }): Promise<WorkflowStepEvent<T>> {
    if (!options || typeof options.type !== "string" || options.type === "") throw new TypeError(`step.waitForEvent(${JSON.stringify(name)}): give the event's { type }`);
    for (const k of Object.keys(options)) if (k !== "type" && k !== "timeout") throw new TypeError(`step.waitForEvent(${JSON.stringify(name)}).${k}: not an option (type, timeout)`);
    const timeoutMs = durationMs(options.timeout ?? "24 hours", `step.waitForEvent(${JSON.stringify(name)}).timeout`);
    const got = await this.ctx.waitForSignal<T>(options.type, { timeoutMs });
    if (got === null) throw new Error(`step.waitForEvent(${JSON.stringify(name)}): no event of type ${JSON.stringify(options.type)} within ${timeoutMs} ms`);
    return { payload: got.data, timestamp: new Date(this.ctx.now()), type: options.type };
  }
}

function checkConfig(name: string, config: WorkflowStepConfig): WorkflowStepConfig {
  for (const k of Object.keys(config)) if (!CONFIG_KEYS.has(k)) throw new TypeError(`step.do(${JSON.stringify(name)}) config.${k}: not a step setting (retries, timeout)`);
  if (config.retries !== undefined) {
    for (const k of Object.keys(config.retries)) if (!RETRY_KEYS.has(k)) throw new TypeError(`step.do(${JSON.stringify(name)}) config.retries.${k}: not a retry setting (limit, delay, backoff)`);
    const { limit, backoff } = config.retries;
    if (!Number.isInteger(limit) || limit < 0) throw new TypeError(`step.do(${JSON.stringify(name)}) config.retries.limit: ${String(limit)} is not a whole number of retries`);
    if (backoff !== undefined && !["constant", "linear", "exponential"].includes(backoff)) throw new TypeError(`step.do(${JSON.stringify(name)}) config.retries.backoff: "${String(backoff)}" is not constant, linear or exponential`);
  }
  return config;
}

function backoff(kind: WorkflowBackoff, delayMs: number, attempt: number): number {
  if (kind === "constant") return delayMs;
  if (kind === "linear") return delayMs * (attempt + 1);
  return delayMs * 2 ** attempt;
}

/** bounded: one try of a step, past its `timeout` a failure naming the step (deadlines.ts: the runtime's one deadline timer). */
async function bounded<T>(p: Promise<T>, ms: number | undefined, name: string): Promise<T> {
  if (ms === undefined) return p;
  try {
    return await withTimeout(p, ms);
  } catch (e) {
    throw e instanceof DeadlineError ? new Error(`step.do(${JSON.stringify(name)}) timed out after ${ms} ms`) : e;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    if (ms <= 0) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}
