/**
 * edgequeue/workflows (docs/coming-from/workflows.md): a Cloudflare Workflows class run as a job type. The example
 * handler's demo.workflow — two step.do, a one-second step.sleep, a step.waitForEvent("approval") — goes through
 * the real queue and handler Worker, driven by the binding-shaped client (create, get, status with Workflows'
 * names, sendEvent, pause, resume, terminate, restart); step.do's retry and timeout config, NonRetryableError and the refusals of
 * a bad config run in the step test kit (edgequeue/testing), whose journal is the queue's.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createClient, type QueueBinding } from "../../src/sdk";
import { runJob } from "../../src/testing";
import { createWorkflow, NonRetryableError, WorkflowEntrypoint, workflowHandler, type WorkflowEvent, type WorkflowStep, type WorkflowsQueueClient } from "../../src/workflows";

const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue) as unknown as WorkflowsQueueClient;
const flow = createWorkflow<{ orderId?: string; items?: number }>(rpc, "demo.workflow");

describe("a Workflows class on the queue (demo.workflow)", () => {
  it("runs its steps, sleeps, waits for its event, and completes with what run returned; status speaks Workflows", async () => {
    const id = `order-${crypto.randomUUID()}`;
    const instance = await flow.create({ id, params: { orderId: id, items: 3 } });
    expect((await flow.get(id)).id).toBe(instance.id);
    // The sleep, then the wait for the event: "waiting" either way, as Workflows says.
    await vi.waitFor(async () => expect((await rpc.get(instance.id)).waitingFor).toEqual([expect.objectContaining({ kind: "signal", name: "approval" })]), { timeout: 15_000, interval: 50 });
    expect((await instance.status()).status).toBe("waiting");
    await instance.sendEvent({ type: "approval", payload: { approved: true, by: "ops" } });
    await vi.waitFor(async () => expect((await instance.status()).status).toBe("complete"), { timeout: 10_000, interval: 50 });
    expect(await instance.status()).toEqual({
      status: "complete",
      output: { order: { orderId: id, items: 3 }, priced: { total: 30 }, approval: { approved: true, by: "ops" } },
    });
    // restart: a new instance with the same params, from the start (a rerun: its own id).
    const again = await instance.restart();
    expect(again.id).not.toBe(instance.id);
    await vi.waitFor(async () => expect((await again.status()).status).toBe("waiting"), { timeout: 15_000, interval: 50 });
    await again.terminate();
    expect((await again.status()).status).toBe("terminated");
    await expect(again.pause()).rejects.toThrow(/cannot pause job .*: it is already cancelled/);
  });

  it("pause holds an instance wherever it is — queued, mid-step, asleep or waiting — and resume runs it on to its end", async () => {
    const id = `paused-${crypto.randomUUID()}`;
    const instance = await flow.create({ id, params: { orderId: id, items: 1 } });
    await instance.pause();
    // Paused at once if it had not started, at its next step if it had ("waitingForPause" until then).
    await vi.waitFor(async () => expect((await instance.status()).status).toBe("paused"), { timeout: 15_000, interval: 50 });
    // The event it will wait for may come first: it is kept for it.
    await instance.sendEvent({ type: "approval", payload: { approved: true } });
    expect((await instance.status()).status).toBe("paused");
    await instance.resume();
    await vi.waitFor(async () => expect((await instance.status()).status).toBe("complete"), { timeout: 15_000, interval: 50 });
    expect((await instance.status()).output).toMatchObject({ priced: { total: 10 }, approval: { approved: true } });
    await expect(instance.resume()).rejects.toThrow(/not paused/);
  });

  it("createBatch makes one instance each; a second create of the same id finds the first", async () => {
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const made = await flow.createBatch(ids.map((id) => ({ id, params: { orderId: id } })));
    expect(made).toHaveLength(2);
    expect((await flow.create({ id: ids[0], params: { orderId: "other" } })).id).toBe(made[0]!.id);
    for (const m of made) await m.terminate();
  });
});

describe("step.do's config, in the step test kit", () => {
  type Env = { calls: number };

  it("retries a throwing step up to its limit, then fails the attempt; NonRetryableError fails the job at once", async () => {
    let calls = 0;
    class Flaky extends WorkflowEntrypoint<Env, { failures: number }> {
      async run(event: WorkflowEvent<{ failures: number }>, step: WorkflowStep) {
        return step.do("call", { retries: { limit: 3, delay: 5, backoff: "linear" } }, async () => {
          calls++;
          if (calls <= event.payload.failures) throw new Error(`try ${calls} failed`);
          return { tries: calls };
        });
      }
    }
    const ok = await (await runJob(workflowHandler(Flaky), { failures: 2 })).settle();
    expect(ok).toMatchObject({ state: "completed", result: { tries: 3 }, runs: 1 });
    calls = 0;
    const over = await runJob(workflowHandler(Flaky), { failures: 10 });
    expect(over).toMatchObject({ state: "pending", error: "try 4 failed" });
    class Refused extends WorkflowEntrypoint {
      async run(_e: WorkflowEvent<unknown>, step: WorkflowStep) {
        return step.do("charge", { retries: { limit: 5, delay: "1 second" } }, async () => {
          throw new NonRetryableError("card declined");
        });
      }
    }
    expect(await runJob(workflowHandler(Refused), {})).toMatchObject({ state: "failed", failureKind: "fatal", error: "card declined" });
  });

  it("a try past its timeout fails as a throw does; a journaled step is not run again on a retry", async () => {
    let runs = 0;
    class Slow extends WorkflowEntrypoint {
      async run(_e: WorkflowEvent<unknown>, step: WorkflowStep) {
        const first = await step.do("first", async () => ++runs);
        await step.do("slow", { timeout: 20 }, () => new Promise((resolve) => setTimeout(resolve, 500)));
        return { first };
      }
    }
    const run = await runJob(workflowHandler(Slow), {});
    expect(run).toMatchObject({ state: "pending", error: expect.stringContaining('step.do("slow") timed out after 20 ms') });
    expect(runs).toBe(1);
  });

  it("a config key Workflows does not have, a bad duration or an event without a type is refused naming it", async () => {
    const refusal = async (body: (step: WorkflowStep) => Promise<unknown>) => {
      class Bad extends WorkflowEntrypoint {
        run(_e: WorkflowEvent<unknown>, step: WorkflowStep) {
          return body(step);
        }
      }
      return (await runJob(workflowHandler(Bad), {})).error;
    };
    expect(await refusal((s) => s.do("a", { retry: { limit: 1 } } as never, async () => 1))).toMatch(/step\.do\("a"\) config\.retry: not a step setting \(retries, timeout\)/);
    expect(await refusal((s) => s.do("a", { retries: { limit: 1, delay: 1, jitter: true } } as never, async () => 1))).toMatch(/config\.retries\.jitter: not a retry setting/);
    expect(await refusal((s) => s.sleep("nap", "3 fortnights" as never))).toMatch(/step\.sleep\("nap"\): "3 fortnights" is not a duration/);
    expect(await refusal((s) => s.waitForEvent("e", {} as never))).toMatch(/step\.waitForEvent\("e"\): give the event's \{ type \}/);
  });

  it("sleep and waitForEvent journal as the queue's sleep and signal wait; the event's payload is what sendEvent sent", async () => {
    class Waits extends WorkflowEntrypoint {
      async run(_e: WorkflowEvent<unknown>, step: WorkflowStep) {
        await step.sleep("nap", "2 seconds");
        const e = await step.waitForEvent<{ ok: boolean }>("approval", { type: "approved", timeout: "1 minute" });
        return { got: e.payload, type: e.type };
      }
    }
    let run = await runJob(workflowHandler(Waits), {});
    expect(run.steps.map((s) => [s.kind, s.name])).toEqual([["sleep", "nap"]]);
    run = await run.advanceTo(run.dueAt!).resume();
    expect(run.state).toBe("waiting");
    expect(run.signal("approved", { ok: true })).toBe("resumed");
    run = await run.settle();
    expect(run).toMatchObject({ state: "completed", result: { got: { ok: true }, type: "approved" } });
  });
});
