/**
 * Settling one pushed job from its handler outcome, through the same fenced
 * transitions a pull worker uses (so a late answer for a cancelled or
 * reclaimed job changes nothing).
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import { utf8Length } from "../../job/json-size";
import type { JobRow } from "../jobs/job-row";
import type { Outcome } from "../jobs/outcome";
import { complete, fail, snooze } from "../jobs/settle";
import { sleep } from "../workflow/sleep";
import type { HomeStore } from "../jobs/home-store";
import type { HandlerOutcome } from "../../job/handler-contract";
import { wait } from "../workflow/waits";

/** resultText: a completed outcome's result as stored (JSON text or null), or undefined when it is over the size limit. */
export function resultText(config: QueueConfig, o: Extract<HandlerOutcome, { kind: "completed" }>): string | null | undefined {
  const result = o.result ? JSON.stringify(o.result) : null;
  const limit = config.limits.payloadMaxBytes;
  return result !== null && utf8Length(result, limit) > limit ? undefined : result;
}

export function applyOutcome(store: HomeStore, config: QueueConfig, id: string, token: string, o: HandlerOutcome, now: number): Outcome<{ row: JobRow }> {
  // The version of the code that ran it, as its handler reported it — read and bounded with the outcome
  // (dispatch/outcome.ts; docs/deploy.md "Code that changes under running jobs").
  const version = o.version;
  switch (o.kind) {
    case "completed": {
      const result = resultText(config, o);
      if (result === undefined) return fail(store, id, token, { error: `handler result is larger than ${config.limits.payloadMaxBytes} bytes of JSON`, fatal: true, version }, now);
      return complete(store, id, token, result, now, version ?? null);
    }
    case "retry":
      return fail(store, id, token, { error: o.error, retryAfterMs: o.retryAfterMs, consumesAttempt: o.consumesAttempt ?? true, frame: o.frame, version }, now);
    case "failed":
      return fail(store, id, token, { error: o.error, fatal: true, frame: o.frame, nondeterminism: o.nondeterminism === true, version }, now);
    case "snooze":
      return snooze(store, id, token, o.delayMs, now, version ?? null);
    case "sleep":
      return sleep(store, id, token, { ...o, version }, now);
    case "wait":
      return wait(store, id, token, { ...o, version }, now);
  }
}
