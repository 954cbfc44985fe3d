/**
 * What a failure handler is given (docs/workflows.md "Failure handlers"): `{"job": <the failed job's view>}`, the
 * view GET /v1/jobs/{id} answers, field for field — its error is `lastError`. A handler run by a pull worker reads
 * the fields the docs name and returns them.
 */
import { exports } from "cloudflare:workers";
import { expect, it, vi } from "vitest";
import { createWorker } from "../../src/pull-worker";
import { api, flushJobs, isTerminal, TOKEN, waitForJob } from "../helpers/api";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

async function runOnce(type: string, handler: (payload: any) => unknown): Promise<void> {
  const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], handlers: { [type]: handler }, fetch: fetchCoordinator, log: () => {} });
  expect(await w.runOnce()).toBe(1);
  await w.stop();
}

it("a failure handler reads the failed job's lastError, failureKind, payload and attempts from its payload, named as in the job's view", async () => {
  const scope = { type: "FailurePayload", id: crypto.randomUUID() };
  const r = await api("POST", "/v1/jobs", { type: "pull.onfail", payload: { order: 42 }, scope });
  const id = r.body.job.id as string;
  await flushJobs(id);
  await runOnce("pull.onfail", () => {
    throw new Error("card declined");
  });
  const failed = await waitForJob(id, isTerminal);
  expect(failed).toMatchObject({ state: "failed", lastError: "card declined" });

  const handler = await vi.waitFor(async () => {
    const items = (await api("GET", `/v1/jobs?type=pull.onfail.handler&scopeType=${scope.type}&scopeId=${scope.id}`)).body.items as { id: string }[];
    expect(items).toHaveLength(1);
    return items[0]!;
  });
  await flushJobs(handler.id);
  let given: Record<string, unknown> = {};
  await runOnce("pull.onfail.handler", (payload: { job: Record<string, unknown> }) => {
    given = payload.job;
    return { error: payload.job.lastError, kind: payload.job.failureKind, attempts: payload.job.attempts, order: (payload.job.payload as { order: number }).order };
  });
  expect(await waitForJob(handler.id, isTerminal)).toMatchObject({ state: "completed", result: { error: "card declined", kind: "retries_exhausted", attempts: 1, order: 42 } });
  // The job's view, with its field names: no `error` beside `lastError`.
  expect(Object.keys(given).sort()).toEqual(Object.keys(failed).sort());
  expect(given).not.toHaveProperty("error");
});
