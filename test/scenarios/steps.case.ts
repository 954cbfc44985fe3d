/** Durable steps and sleeps (docs/handlers.md "Durable steps"): written once, run on the queue and on the kit. */
import { expect } from "vitest";
import type { Scenario } from "./backend";

const FIXED_1S = { kind: "fixed", baseMs: 1_000 } as const;

export const stepScenarios: Scenario[] = [
  {
    name: "a step that ran is not run again after a retry: the retry replays its journaled result",
    async run(b) {
      const { id } = await b.enqueue("scenario.steps", { failOnce: true }, { maxAttempts: 3, backoff: FIXED_1S });
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 1, lastError: expect.stringContaining("fails once, after step a"), runAt: b.now() + 1_000 });
      expect(await b.steps(id)).toMatchObject([{ name: "a", kind: "step", attempt: 1, result: { ranOn: 1 } }]);
      await b.advance(1_000);
      // Step a's function did not run in attempt 2: its result says attempt 1.
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 2, result: { a: { ranOn: 1 }, b: { ranOn: 2 } } });
      expect((await b.steps(id)).map((s) => [s.name, s.kind, s.attempt, s.result])).toEqual([
        ["a", "step", 1, { ranOn: 1 }],
        ["b", "step", 2, { ranOn: 2 }],
      ]);
    },
  },
  {
    name: "a sleep gives its attempt back; the job runs on, past its journaled steps, once the sleep's time has come",
    async run(b) {
      const t = b.now();
      const { id } = await b.enqueue("scenario.sleep", { ms: 60_000 });
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 0, runAt: t + 60_000 });
      expect(await b.steps(id)).toMatchObject([
        { name: "before", kind: "step", attempt: 1 },
        { name: "nap", kind: "sleep", wakeAt: t + 60_000 },
      ]);
      await b.advance(59_999);
      expect(await b.job(id)).toMatchObject({ state: "pending", attempts: 0 });
      await b.advance(1);
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { before: { ranOn: 1 }, after: { ranOn: 1 } } });
      expect((await b.steps(id)).map((s) => [s.name, s.kind])).toEqual([
        ["before", "step"],
        ["nap", "sleep"],
        ["after", "step"],
      ]);
    },
  },
];
