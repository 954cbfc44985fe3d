/** Child jobs (docs/workflows.md "Child jobs"): a child's result returned to its parent, its failure seen by it. */
import { expect } from "vitest";
import type { Scenario } from "./backend";

export const childScenarios: Scenario[] = [
  {
    name: "child job: the parent waits for it and gets its result; the invoke is journaled with the child's end",
    async run(b) {
      const { id } = await b.enqueue("scenario.parent", { child: {} });
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { result: { attempt: 1, runs: 1 } } });
      const [invoke, ...rest] = await b.steps(id);
      expect(rest).toEqual([]);
      // The journaled end of a completed child: its id, state and result, nothing more (the ids differ by backend).
      expect(invoke).toMatchObject({ name: "child", kind: "invoke", attempt: 1 });
      expect(invoke!.result).toEqual({ child: expect.any(String), state: "completed", result: { attempt: 1, runs: 1 } });
    },
  },
  {
    name: "child job that fails: the parent catches ChildJobFailedError with the child's state, failure kind and error",
    async run(b) {
      const { id } = await b.enqueue("scenario.parent", { child: { fatal: true } });
      expect(await b.job(id)).toMatchObject({
        state: "completed",
        result: { caught: { step: "child", state: "failed", failureKind: "fatal", error: expect.stringContaining("fatal: not worth a retry") } },
      });
      expect((await b.steps(id))[0]!.result).toEqual({ child: expect.any(String), state: "failed", result: null, error: expect.stringContaining("fatal: not worth a retry"), failureKind: "fatal" });
    },
  },
  {
    name: "child job that retries: the parent waits, holding no attempt, until the child's backoff passed and it completed",
    skipOn: { kit: "the kit runs a child to its end inside its parent's attempt, whatever the child's backoff: the parent never waits" },
    async run(b) {
      const { id } = await b.enqueue("scenario.parent", { child: { succeedOn: 2 } });
      expect(await b.job(id)).toMatchObject({ state: "waiting", attempts: 0, waitingFor: [{ kind: "invoke", name: "child" }] });
      // The child's type backoff (the config's default, exponential from 1 s): well past it.
      await b.advance(1_000);
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { result: { attempt: 2 } } });
    },
  },
];
