/**
 * Event waits across objects (src/scope/workflow/event-waits.ts; docs/workflows.md "Waiting for an event"): a job's
 * ctx.waitForEvent registers with its topic's registry object through the outbox; an emit ends the waits its
 * payload matches, once each; an event emitted after a wait began but before its registration arrived still ends it.
 */
import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock";
import { registryHome } from "../../src/job/event-tags";
import type { WaitItem } from "../../src/job/handler-contract";
import type { ScopeDO } from "../../src/scope/scope-do";
import { env, freshScope, newJob, T0, useClock, type ScopeStub } from "../helpers/scope";

const START = { at: T0, seed: "seed" };

async function waitingJob(stub: ScopeStub, home: string, topic: string, match: Record<string, unknown>) {
  const { id, token } = await runInDurableObject(stub, async (o: ScopeDO) => {
    await o.enqueue([newJob(home)]);
    const [held] = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
    return { id: held!.id, token: held!.leaseToken };
  });
  const wait: WaitItem = { seq: 0, kind: "event", name: topic, match, startedAt: T0 };
  const out = await stub.wait(id, token, { waits: [wait], start: START });
  return { id, out };
}

const registry = async (topic: string, at: number) => {
  const stub = env.SCOPE.getByName(registryHome(topic));
  await useClock(stub, new ManualClock(at));
  return stub;
};

const waiters = (stub: ScopeStub) => runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM event_waiter").one().n);

describe("an event wait", () => {
  it("registers with its topic's registry; a matching event ends it (once), others pass it by", async () => {
    const topic = `t.${crypto.randomUUID().slice(0, 8)}`;
    const reg = await registry(topic, T0 + 1);
    const { home, stub } = await freshScope();
    const { id, out } = await waitingJob(stub, home, topic, { orderId: "o1" });
    expect(out.ok && out.job).toMatchObject({ state: "waiting", waitingFor: [{ kind: "event", name: topic, until: null }] });
    await vi.waitFor(async () => expect(await waiters(reg)).toBe(1));
    expect(await reg.publish(topic, "e0", JSON.stringify({ orderId: "o2" }))).toBe(0);
    expect(await reg.publish(topic, "e1", JSON.stringify({ orderId: "o1", amount: 5 }))).toBe(1);
    expect(await reg.publish(topic, "e1", JSON.stringify({ orderId: "o1" }))).toBe(0);
    expect(await reg.publish(topic, "e2", JSON.stringify({ orderId: "o1" }))).toBe(0);
    expect(await waiters(reg)).toBe(0);
    const job = await vi.waitFor(async () => {
      const j = await stub.get(id);
      expect(j!.state).toBe("pending");
      return j!;
    });
    expect(job.waitingFor).toBeNull();
    const [entry] = (await scopeRpc(stub).steps(id)) as unknown as { kind: string; name: string; result: unknown }[];
    expect(entry).toMatchObject({ kind: "event", name: topic, result: { id: "e1", topic, payload: { orderId: "o1", amount: 5 }, at: T0 + 1 } });
  });

  it("an event emitted after the wait began, before its registration arrived, still ends it; one from before does not", async () => {
    const topic = `t.${crypto.randomUUID().slice(0, 8)}`;
    // The registry's clock is ahead of the job's object: its event at T0 + 10 is after the wait began at T0.
    const reg = await registry(topic, T0 - 5);
    expect(await reg.publish(topic, "before", JSON.stringify({ k: 1 }))).toBe(0);
    await useClock(reg, new ManualClock(T0 + 10));
    expect(await reg.publish(topic, "after", JSON.stringify({ k: 1 }))).toBe(0);
    const { home, stub } = await freshScope();
    const { id } = await waitingJob(stub, home, topic, { k: 1 });
    await vi.waitFor(async () => expect((await stub.get(id))!.state).toBe("pending"));
    expect(((await scopeRpc(stub).steps(id)) as unknown as { result: unknown }[])[0]!.result).toMatchObject({ id: "after" });
    expect(await waiters(reg)).toBe(0);
  });

  it("a cancelled job's wait is dropped from the registry", async () => {
    const topic = `t.${crypto.randomUUID().slice(0, 8)}`;
    const reg = await registry(topic, T0);
    const { home, stub } = await freshScope();
    const { id } = await waitingJob(stub, home, topic, {});
    await vi.waitFor(async () => expect(await waiters(reg)).toBe(1));
    await stub.cancel(id, null);
    await vi.waitFor(async () => expect(await waiters(reg)).toBe(0));
    expect(await reg.publish(topic, "late", "{}")).toBe(0);
    // Retried by hand (later: the event above is from before), its open wait registers again, and an event ends it.
    await useClock(stub, new ManualClock(T0 + 100));
    await useClock(reg, new ManualClock(T0 + 100));
    expect((await stub.retry(id)).ok).toBe(true);
    await vi.waitFor(async () => expect(await waiters(reg)).toBe(1));
    expect(await reg.publish(topic, "after-retry", "{}")).toBe(1);
    await vi.waitFor(async () => expect(((await scopeRpc(stub).steps(id)) as unknown as { result: unknown }[])[0]!.result).toMatchObject({ id: "after-retry" }));
  });
});
