/** Retries (docs/handlers.md, docs/guarantees.md): attempts counted, backoffs waited out, failure kinds — on both backends. */
import { expect } from "vitest";
import { settle, type Scenario } from "./backend";

const FIXED_1S = { kind: "fixed", baseMs: 1_000 } as const;

export const retryScenarios: Scenario[] = [
  {
    name: "retry with a fixed backoff until success: each failure counted, the next attempt due only after the backoff",
    async run(b) {
      const { id } = await b.enqueue("scenario.retry", { succeedOn: 3 }, { maxAttempts: 3, backoff: FIXED_1S });
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 1, lastError: expect.stringContaining("not yet (attempt 1)"), runAt: b.now() + 1_000 });
      await b.advance(999);
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 1 });
      await b.advance(1);
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 2, lastError: expect.stringContaining("not yet (attempt 2)"), runAt: b.now() + 1_000 });
      await b.advance(1_000);
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 3, failureKind: null, result: { attempt: 3, runs: 3 } });
    },
  },
  {
    name: "retry with an exponential backoff (full jitter): each delay within base · 2^(attempt−1)",
    async run(b) {
      const { id } = await b.enqueue("scenario.retry", { succeedOn: 3 }, { maxAttempts: 3, backoff: { baseMs: 1_000, maxMs: 60_000 } });
      const first = await b.job(id);
      expect(first.runAt - b.now()).toBeGreaterThanOrEqual(0);
      expect(first.runAt - b.now()).toBeLessThanOrEqual(1_000);
      await b.advance(first.runAt - b.now());
      const second = await b.job(id);
      expect(second).toMatchObject({ state: "pending", attempts: 2 });
      expect(second.runAt - b.now()).toBeLessThanOrEqual(2_000);
      expect(await settle(b, id)).toMatchObject({ state: "completed", attempts: 3, result: { attempt: 3 } });
    },
  },
  {
    name: "retry until dead: the last attempt's failure fails the job as retries_exhausted, with its error",
    async run(b) {
      const { id } = await b.enqueue("scenario.retry", { succeedOn: 5 }, { maxAttempts: 2, backoff: FIXED_1S });
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 1 });
      expect(await settle(b, id)).toMatchObject({ state: "failed", attempts: 2, failureKind: "retries_exhausted", lastError: expect.stringContaining("not yet (attempt 2)") });
    },
  },
  {
    name: "a TerminalJobError fails the job at once, whatever attempts remain: fatal",
    async run(b) {
      const { id } = await b.enqueue("scenario.retry", { fatal: true }, { maxAttempts: 5, backoff: FIXED_1S });
      expect(await b.job(id)).toMatchObject({ state: "failed", attempts: 1, failureKind: "fatal", lastError: expect.stringContaining("fatal: not worth a retry") });
    },
  },
  {
    name: "a retry that gives its attempt back is not counted, and its retryAfterMs is a floor over the backoff",
    async run(b) {
      const { id } = await b.enqueue("scenario.retry", { giveBack: 2, retryAfterMs: 500 }, { maxAttempts: 1, backoff: { kind: "fixed", baseMs: 100 } });
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 0, runAt: b.now() + 500 });
      await b.advance(500);
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 0, runAt: b.now() + 500 });
      await b.advance(500);
      // maxAttempts 1, and still it completed: the two runs that gave their attempt back spent none.
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { attempt: 1, runs: 3 } });
    },
  },
];
