/**
 * ctx.sleep's wake time is reckoned on the object's clock from the sleep's
 * duration, not on the handler's clock (docs/handlers.md "Durable steps").
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { StepRunner, SleepRequest } from "../../src/runtime/steps";
import { freshScope, newJob, row, T0 } from "../helpers/scope";

describe("a sleep's wake time", () => {
  it("is now + durationMs on the object's clock, whatever the handler's clock said", async () => {
    const { home, stub } = await freshScope();
    const id = await runInDurableObject(stub, async (o: ScopeDO) => {
      await o.enqueue([newJob(home, { type: "test.job" })]);
      const [held] = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
      // The handler's clock is a year ahead: its `until` would put the job to sleep for a year.
      const skewed = T0 + 365 * 86_400_000;
      const out = await o.sleep(held!.id, held!.leaseToken!, { name: "nap", seq: 0, until: skewed + 1000, durationMs: 1000, startedAt: skewed, start: { at: skewed, seed: "s" } });
      expect(out.ok).toBe(true);
      return held!.id;
    });
    expect((await row(stub, id)).run_at).toBe(T0 + 1000);
  });

  it("a first sleep sends its duration; a replayed one sends none (the journal has its wake time)", async () => {
    const job = { id: "j", attempt: 1, dispatchedAt: T0 + 5000 };
    const writer = { write: async () => ({ ok: true as const }) };
    const first = new StepRunner(job as never, { start: null, entries: [] }, writer, new AbortController().signal, () => T0 + 999_999);
    const thrown = await first.sleep("nap", 1000).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(SleepRequest);
    expect((thrown as SleepRequest).sleep).toMatchObject({ durationMs: 1000 });
    const entry = { seq: 0, name: "nap", kind: "sleep" as const, result: null, startedAt: T0, finishedAt: T0, attempt: 1, wakeAt: T0 + 9000 };
    const replay = new StepRunner(job as never, { start: { at: T0, seed: "s" }, entries: [entry] }, writer, new AbortController().signal, () => T0 + 999_999);
    const again = await replay.sleep("nap", 1000).catch((e: unknown) => e);
    expect((again as SleepRequest).sleep).toMatchObject({ durationMs: null, until: T0 + 9000 });
  });
});
