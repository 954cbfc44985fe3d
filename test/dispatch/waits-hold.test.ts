/**
 * A waiting job holds nothing (docs/workflows.md "While a job waits"): for each kind of wait — a signal, a wait
 * token, an event, a child job — pushed and pulled, the job in `waiting` has no lease and no attempt spent, its
 * type's concurrency (1) and its pool's (1) are free for another job of the type, which runs to its end meanwhile;
 * then what it waits for ends the wait and it completes.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { JobContext } from "../../src/handler";
import { createWorker } from "../../src/pull-worker";
import { waitOnce } from "../fixtures/handler";
import { api, flushJobs, isTerminal, TOKEN, waitForJob } from "../helpers/api";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

type Kind = "signal" | "token" | "event" | "invoke";

async function enqueue(type: string, payload: Record<string, unknown>): Promise<string> {
  const r = await api("POST", "/v1/jobs", { type, payload, scope: { type: "Hold", id: crypto.randomUUID() } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job.id as string;
}

/** end: what the job waits for arrives. */
async function end(kind: Kind, id: string, orderId: string): Promise<void> {
  switch (kind) {
    case "signal":
      expect((await api("POST", `/v1/jobs/${id}/signals/go`, { data: 1 })).status).toBe(202);
      return;
    case "token": {
      const token = (await api("GET", `/v1/jobs/${id}/steps`)).body.items[0].result as { path: string };
      const r = await fetchCoordinator(`http://queue.test${token.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ data: 1 }) });
      expect(r.status).toBe(202);
      return;
    }
    case "event":
      // The wait registers with the topic's registry just after it began: an emit finds it once it has.
      await vi.waitFor(async () => expect((await api("POST", "/v1/topics/order.paid/events", { payload: { orderId } })).body.waits).toBe(1));
      return;
    case "invoke": {
      const child = (await api("GET", `/v1/jobs/${id}/children`)).body.children[0].id as string;
      await waitForJob(child, (j) => j.state === "waiting");
      expect((await api("POST", `/v1/jobs/${child}/signals/approve`, { data: 1 })).status).toBe(202);
      return;
    }
  }
}

async function poolActive(name: string): Promise<number> {
  const pools = (await api("GET", "/v1/pools")).body.pools as { name: string; active: number }[];
  return pools.find((p) => p.name === name)!.active;
}

describe.each(["signal", "token", "event", "invoke"] as const)("a job waiting on %s", (kind) => {
  it("pushed: holds no lease, attempt or permit; another job of its type runs meanwhile; then it completes", async () => {
    const orderId = crypto.randomUUID();
    const id = await enqueue("test.wait.pooled", { kind, match: { orderId } });
    const waiting = await waitForJob(id, (j) => j.state === "waiting");
    expect(waiting).toMatchObject({ attempts: 0, waitingFor: [expect.objectContaining({ kind: kind === "token" ? "token" : kind })] });
    expect(waiting.leaseExpiresAt).toBeUndefined();
    expect(await poolActive("wait-pool")).toBe(0);
    const other = await enqueue("test.wait.pooled", { kind: "none" });
    expect(await waitForJob(other, isTerminal)).toMatchObject({ state: "completed" });
    expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("waiting");
    await end(kind, id, orderId);
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", attempts: 1, result: { got: expect.anything() } });
  });

  it("pulled: holds no lease, attempt or permit; the worker claims another job of its type meanwhile; then it completes", async () => {
    const type = "pull.wait.pooled";
    const worker = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], handlers: { [type]: (p: unknown, ctx: JobContext) => waitOnce(p as never, ctx) }, fetch: fetchCoordinator, log: () => {} });
    const orderId = crypto.randomUUID();
    const id = await enqueue(type, { kind, match: { orderId } });
    await flushJobs(id);
    expect(await worker.runOnce()).toBe(1);
    const waiting = await waitForJob(id, (j) => j.state === "waiting");
    expect(waiting.attempts).toBe(0);
    expect(waiting.leaseExpiresAt).toBeUndefined();
    expect(await poolActive("wait-pool-pulled")).toBe(0);
    const other = await enqueue(type, { kind: "none" });
    await flushJobs(other);
    expect(await worker.runOnce()).toBe(1);
    expect(await waitForJob(other, isTerminal)).toMatchObject({ state: "completed" });
    await end(kind, id, orderId);
    await waitForJob(id, (j) => j.state === "pending");
    await flushJobs(id);
    expect(await worker.runOnce()).toBe(1);
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", attempts: 1, result: { got: expect.anything() } });
    await worker.stop();
    // The catalog hears of these homes' last changes at once, not a second on: the next test's claim must not find
    // them ranked first, still pending, and stop there.
    await flushJobs(id, other);
  });
});
