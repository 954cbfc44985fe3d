/**
 * Inline claims: claimOrEnqueue leases the job to the caller when no job of
 * its key runs, else queues it as the key's follower; runClaimed completes it
 * and drains the followers — over RPC and HTTP alike (docs/producers.md "Inline claims").
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createClient, createHttpClient, type QueueBinding } from "../../src/sdk";
import { api, TOKEN, uniqueScope, uniqueType } from "../helpers/api";

const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue);
const http = createHttpClient("http://queue.test/", TOKEN, { fetch: (input, init) => (exports as unknown as { default: Fetcher }).default.fetch(input, init) });

describe.each([
  ["rpc", rpc],
  ["http", http],
])("claimOrEnqueue / runClaimed (%s)", (_name, queue) => {
  it("runs inline when the key is free, queues one follower while it runs, and drains it after", async () => {
    const type = uniqueType("inline");
    const scope = uniqueScope("inline");
    const handle = await queue.claimOrEnqueue({ type, payload: { n: 1 }, scope, dedupeKey: "acct-1" });
    expect(handle).toMatchObject({ state: "running", attempts: 1, payload: { n: 1 } });
    const ran: number[] = [];
    const result = await queue.runClaimed(handle!, async (job) => {
      ran.push(job.payload.n as number);
      // Requests for the same key while it runs: one follower; the next request joins it.
      if (job.payload.n === 1) {
        expect(await queue.claimOrEnqueue({ type, payload: { n: 2 }, scope, dedupeKey: "acct-1" })).toBeNull();
        expect(await queue.claimOrEnqueue({ type, payload: { n: 3 }, scope, dedupeKey: "acct-1" })).toBeNull();
      }
      return { n: job.payload.n as number };
    });
    expect(result).toEqual({ n: 1 });
    expect(ran).toEqual([1, 2]);
    const jobs = (await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}`)).body.items;
    expect(jobs.map((j: { state: string; result: unknown }) => [j.state, j.result])).toEqual([
      ["completed", { n: 1 }],
      ["completed", { n: 2 }],
    ]);
  });

  it("a failure with a follower pending supersedes the failed job, runs the follower, and throws", async () => {
    const type = uniqueType("inline-fail");
    const scope = uniqueScope("inline-fail");
    const handle = await queue.claimOrEnqueue({ type, payload: { n: 1 }, scope, dedupeKey: "k" });
    const ran: number[] = [];
    await expect(
      queue.runClaimed(handle!, async (job) => {
        ran.push(job.payload.n as number);
        if (job.payload.n === 1) {
          await queue.claimOrEnqueue({ type, payload: { n: 2 }, scope, dedupeKey: "k" });
          throw new Error("the first one broke");
        }
        return {};
      }),
    ).rejects.toThrow("the first one broke");
    expect(ran).toEqual([1, 2]);
    const first = (await api("GET", `/v1/jobs/${handle!.id}`)).body.job;
    expect(first.state).toBe("superseded");
    expect(first.cancelReason).toMatch(/^superseded by /);
  });

  it("a failure with no follower is retried after its backoff, not run again at once", async () => {
    const type = uniqueType("inline-retry");
    const scope = uniqueScope("inline-retry");
    const handle = await queue.claimOrEnqueue({ type, payload: {}, scope, dedupeKey: "k", maxAttempts: 3 });
    let runs = 0;
    await expect(
      queue.runClaimed(handle!, async () => {
        runs++;
        throw new Error("transient");
      }),
    ).rejects.toThrow("transient");
    expect(runs).toBe(1);
    expect((await api("GET", `/v1/jobs/${handle!.id}`)).body.job).toMatchObject({ state: "pending", attempts: 1, lastError: "transient" });
  });

  it("refuses a pushed type, a guarded type and a missing key, naming the field", async () => {
    const pushed = await api("POST", "/v1/jobs/claim-or-enqueue", { job: { type: "demo.echo", payload: {}, dedupeKey: "k" }, worker: "w" });
    expect([pushed.status, pushed.body.error.details[0].path]).toEqual([400, "job.type"]);
    // A guarded pulled type takes permits before it leases, which the one-transaction inline claim cannot wait for.
    const guarded = await api("POST", "/v1/jobs/claim-or-enqueue", { job: { type: "pull.limited", payload: {}, dedupeKey: "k" }, worker: "w" });
    expect([guarded.status, guarded.body.error.details[0].path]).toEqual([400, "job.type"]);
    expect(guarded.body.error.message).toContain("claim it with a worker");
    const keyless = await api("POST", "/v1/jobs/claim-or-enqueue", { job: { type: "x.y", payload: {} }, worker: "w" });
    expect([keyless.status, keyless.body.error.details[0].path]).toEqual([400, "job.dedupeKey"]);
  });
});
