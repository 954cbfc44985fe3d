/**
 * Workflows as Cloudflare's Workflows documentation writes them, their import changed and nothing else
 * (test/fixtures/handler/cloudflare-workflows.ts; docs/coming-from/workflows.md), run through the real queue and the
 * test handler Worker: the hello-world template's class — its steps, its fetch, its one-minute sleep (the test moves
 * the job's object's clock past it and fires its alarm), its step with a retry policy — driven by the template's own
 * fetch handler over the binding-shaped client; and the human-in-the-loop pattern: `waitForEvent` ended by
 * `sendEvent`, and `NonRetryableError` failing the instance at once.
 */
import { exports } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock";
import { homeOfJobId } from "../../src/job/home";
import { createClient, type QueueBinding } from "../../src/sdk";
import { createWorkflow, type WorkflowsQueueClient } from "../../src/workflows";
import { templateFetch } from "../fixtures/handler/cloudflare-workflows";
import { probe } from "../helpers/probe";
import { env, useClock } from "../helpers/scope";

const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue) as unknown as WorkflowsQueueClient & {
  jobSteps(id: string): Promise<{ items: { name: string; kind: string; result: unknown }[] }>;
};
const job = async (id: string) => (await rpc.get(id)) as unknown as { state: string; runAt: number; attempts: number; waitingFor: unknown };

/** The template's fetch handler, with its binding: `env.MY_WORKFLOW` is the workflow's client. */
async function call(path: string): Promise<any> {
  const res = await templateFetch.fetch(new Request(`http://workflow.test${path}`), { MY_WORKFLOW: createWorkflow(rpc, "cf.hello") });
  return res.json();
}

describe("Cloudflare's hello-world workflow, its import changed", () => {
  it("runs its steps, its fetch and its one-minute sleep, and completes; the template's fetch handler creates it and reads its status", async () => {
    // Its step that fails at random passes on its first try here (outbound.ts); retries run in workflows.test.ts.
    await probe.random([0.1]);
    const made = await call("/");
    expect(made).toMatchObject({ id: expect.any(String), details: { status: expect.stringMatching(/^(queued|running|waiting)$/) } });
    const id = made.id as string;

    // Two steps, then the sleep: the job is pending until a minute from when it slept.
    const asleep = await vi.waitFor(
      async () => {
        const steps = (await rpc.jobSteps(id)).items;
        expect(steps.map((s) => s.kind)).toEqual(["step", "step", "sleep"]);
        return job(id);
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(asleep.state).toBe("pending");
    expect((await call(`/?instanceId=${id}`)).status).toEqual({ status: "waiting" });

    // The minute passes on its object's clock; its alarm runs it on.
    const stub = env.SCOPE.getByName(homeOfJobId(id)!.name);
    await useClock(stub, new ManualClock(asleep.runAt));
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await call(`/?instanceId=${id}`)).status.status).toBe("complete"), { timeout: 15_000, interval: 50 });

    expect((await call(`/?instanceId=${id}`)).status).toEqual({ status: "complete", output: { files: 4, ipv4: 3 } });
    const steps = (await rpc.jobSteps(id)).items;
    expect(steps.map((s) => [s.kind, s.name])).toEqual([
      ["step", "my first step"],
      ["step", "some other step"],
      ["sleep", "wait on something"],
      ["step", "make a call to write that could maybe, just might, fail"],
    ]);
    // The event the first step returned: the params it was created with, and its instance id.
    expect(steps[0]!.result).toMatchObject({ inputParams: { payload: {}, instanceId: id, timestamp: expect.any(String) }, files: expect.any(Array) });
    expect((steps[1]!.result as { result: { ipv4_cidrs: string[] } }).result.ipv4_cidrs).toHaveLength(3);
    expect(await call("/favicon.ico")).toEqual({});
  });
});

describe("Cloudflare's human-in-the-loop pattern, its import changed", () => {
  const approvals = createWorkflow<{ data?: { amount: number } }>(rpc, "cf.approval");

  it("waits for its approval event, then acts on the decision", async () => {
    const instance = await approvals.create({ params: { data: { amount: 40 } } });
    await vi.waitFor(async () => expect((await instance.status()).status).toBe("waiting"), { timeout: 15_000, interval: 50 });
    expect(await job(instance.id)).toMatchObject({ state: "waiting", waitingFor: [{ kind: "signal", name: "approval" }] });
    await instance.sendEvent({ type: "approval", payload: { approved: true, reviewer: "ann" } });
    await vi.waitFor(async () => expect((await instance.status()).status).toBe("complete"), { timeout: 15_000, interval: 50 });
    expect((await instance.status()).output).toMatchObject({ outcome: "paid 40", reviewer: "ann", request: { amount: 40, instance: instance.id } });
  });

  it("a request without its data fails at once with NonRetryableError, no retry spent on it", async () => {
    const instance = await approvals.create({ params: {} });
    await vi.waitFor(async () => expect((await instance.status()).status).toBe("errored"), { timeout: 15_000, interval: 50 });
    expect(await instance.status()).toEqual({ status: "errored", error: { name: "Error", message: expect.stringContaining("event.payload.data did not contain the expected payload") } });
    expect((await job(instance.id)).attempts).toBe(1);
  });
});
