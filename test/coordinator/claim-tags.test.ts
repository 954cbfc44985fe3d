/**
 * Claims filtered by tags (docs/pull-workers.md): a claim with `tags` leases
 * only jobs that carry at least one of them, in the usual order, across the
 * homes it asks; a waiting tagged claim is not answered by an untagged job.
 */
import { describe, expect, it } from "vitest";
import { createWorker } from "../../src/pull-worker";
import { exports } from "cloudflare:workers";
import { api, TOKEN, uniqueScope, uniqueType } from "../helpers/api";

const enqueue = async (type: string, tags: string[] | undefined, more: Record<string, unknown> = {}) =>
  (await api("POST", "/v1/jobs", { type, payload: {}, ...(tags ? { tags } : {}), ...more })).body.job.id as string;

describe("a claim with tags", () => {
  it("leases only jobs carrying one of the tags, highest priority first, from the type's object and from scopes", async () => {
    const type = uniqueType("tags");
    const plain = await enqueue(type, undefined, { priority: 9 });
    const scan = await enqueue(type, ["scan"], { priority: 1 });
    const both = await enqueue(type, ["scan", "urgent"], { priority: 5 });
    const other = await enqueue(type, ["index"]);
    const scoped = await enqueue(type, ["scan"], { scope: uniqueScope("tags") });
    const got = (await api("POST", "/v1/claim", { worker: "w", types: [type], tags: ["scan"], limit: 10 })).body.jobs as { id: string }[];
    expect(got.map((j) => j.id).sort()).toEqual([scan, both, scoped].sort());
    // Within the type's own object: priority order holds among the tagged jobs.
    expect(got.filter((j) => j.id !== scoped).map((j) => j.id)).toEqual([both, scan]);
    const rest = (await api("POST", "/v1/claim", { worker: "w", types: [type], tags: ["index", "nope"], limit: 10 })).body.jobs as { id: string }[];
    expect(rest.map((j) => j.id)).toEqual([other]);
    expect((await api("GET", `/v1/jobs/${plain}`)).body.job.state).toBe("pending");
  });

  it("a waiting tagged claim is not answered by an untagged job, and is by a tagged one", async () => {
    const type = uniqueType("tagwait");
    const claim = api("POST", "/v1/claim", { worker: "w", types: [type], tags: ["gpu"], waitMs: 3_000 });
    await new Promise((r) => setTimeout(r, 200));
    await enqueue(type, undefined);
    const gpu = await enqueue(type, ["gpu"]);
    expect(((await claim).body.jobs as { id: string }[]).map((j) => j.id)).toEqual([gpu]);
  });

  it("refuses an empty tag list, naming the field; edgequeue/worker sends its tags option", async () => {
    const bad = await api("POST", "/v1/claim", { worker: "w", types: ["x.y"], tags: [] });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "tags"]);
    const type = uniqueType("tagworker");
    const untagged = await enqueue(type, undefined);
    const tagged = await enqueue(type, ["mine"]);
    const ran: string[] = [];
    const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], tags: ["mine"], concurrency: 5, fetch: fetchCoordinator, log: () => {}, handlers: { [type]: async (_p, ctx) => void ran.push(ctx.id) } });
    expect(await w.runOnce()).toBe(1);
    expect(ran).toEqual([tagged]);
    expect((await api("GET", `/v1/jobs/${untagged}`)).body.job.state).toBe("pending");
  });
});
