/**
 * A whole type live (client/queue-events.ts; docs/producers.md "Following a whole type"), as BullMQ's QueueEvents:
 * one subscription per object holding the type's jobs — its own object and each scope — found again as scopes get
 * jobs, an object found late caught up on what ended there since; each ending told once, every failure told.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createHttpClient } from "../../src/client/http-client";
import { createQueueEvents, type QueueEvent } from "../../src/client/queue-events";
import { api, TOKEN, uniqueScope, uniqueType } from "../helpers/api";

const fetchQueue = ((input: RequestInfo | URL, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input as string, init)) as typeof fetch;

/** A pulled job of `type`, claimed and ended by hand: completed with `{n}`, or failed with "boom <n>". */
async function run(type: string, n: number, scope: { type: string; id: string } | undefined, end: "complete" | "fail") {
  const id = (await api("POST", "/v1/jobs", { type, payload: { n }, ...(scope ? { scope } : {}) })).body.job.id as string;
  // A scope's new job reaches the catalog a moment later: the claim waits for it.
  const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 1, waitMs: 5_000 })).body.jobs;
  expect(leased.id).toBe(id);
  await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: n * 10 });
  if (end === "complete") await api("POST", `/v1/jobs/${id}/complete`, { leaseToken: leased.leaseToken, result: { n } });
  else await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: leased.leaseToken, error: `boom ${n}`, fatal: true });
  return id;
}

describe("createQueueEvents", () => {
  it("tells every job of a type as it moves — its own object and each scope's, one found late caught up — each ending once", async () => {
    const type = uniqueType("qe");
    const [a, b] = [uniqueScope("qe-a"), uniqueScope("qe-b")];
    // Jobs of the type in its own object and one scope before it starts: those objects are followed from the start.
    await api("POST", "/v1/jobs", { type, payload: {}, delayMs: 3_600_000 });
    await api("POST", "/v1/jobs", { type, payload: {}, scope: a, delayMs: 3_600_000 });
    const client = createHttpClient("http://queue.test", TOKEN, { fetch: fetchQueue });
    const events = createQueueEvents(client, { type, refreshMs: 100, transport: "sse", fetch: fetchQueue });
    const seen: QueueEvent[] = [];
    events.on("*", (e) => seen.push(e));
    await events.ready;
    expect(events.following).toBe(2);
    const done = [await run(type, 1, undefined, "complete"), await run(type, 2, a, "fail"), await run(type, 3, a, "complete")];
    // A scope that gets the type's jobs only now: its jobs may end before it is followed, and are told all the same.
    done.push(await run(type, 4, b, "fail"), await run(type, 5, b, "fail"));
    await vi.waitFor(() => expect(seen.filter((e) => e.event === "completed" || e.event === "failed")).toHaveLength(5), { timeout: 10_000, interval: 50 });
    expect(events.following).toBe(3);
    const endings = seen.filter((e) => e.event === "completed" || e.event === "failed");
    expect(endings.map((e) => [e.jobId, e.event]).sort()).toEqual(done.map((id, i) => [id, [1, 3].includes(i + 1) ? "completed" : "failed"]).sort());
    expect(endings.find((e) => e.jobId === done[0])).toMatchObject({ type, result: { n: 1 } });
    expect(endings.find((e) => e.jobId === done[1])).toMatchObject({ error: "boom 2" });
    // Moves of the jobs followed from the start: active, progress.
    expect(seen.some((e) => e.event === "active" && e.jobId === done[0])).toBe(true);
    expect(seen.some((e) => e.event === "progress" && e.jobId === done[0] && e.progress === 10 && e.type === type)).toBe(true);
    // No payload on the way, and nothing told twice after another look.
    expect(JSON.stringify(seen)).not.toContain('"payload"');
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.filter((e) => e.event === "completed" || e.event === "failed")).toHaveLength(5);
    events.close();
  });

  it("POST /v1/subscriptions/homes mints a URL per object holding the type, paged; {type, scope} one for the type in a scope", async () => {
    const type = uniqueType("homes");
    const scopes = [uniqueScope("h1"), uniqueScope("h2"), uniqueScope("h3")];
    for (const scope of scopes) await api("POST", "/v1/jobs", { type, payload: {}, scope, delayMs: 3_600_000 });
    // The catalog hears of each scope's jobs about a second after: poll until the three are listed.
    const all = async (limit: number) => {
      const homes: string[] = [];
      let cursor: string | undefined;
      do {
        const r = (await api("POST", "/v1/subscriptions/homes", { type, limit, ...(cursor ? { cursor } : {}) })).body;
        homes.push(...r.items.map((i: { home: string }) => i.home));
        expect(r.include).toEqual(["progress", "steps", "result"]);
        cursor = r.nextCursor ?? undefined;
      } while (cursor);
      return homes;
    };
    await vi.waitFor(async () => expect((await all(100)).filter((h) => h.startsWith("scope:"))).toHaveLength(3), { timeout: 5_000, interval: 100 });
    const paged = await all(1);
    expect(new Set(paged).size).toBe(paged.length);
    expect(paged).toEqual(await all(100));
    const one = await api("POST", "/v1/subscriptions", { type, scope: scopes[0] });
    expect(one.status).toBe(200);
    const bad = await api("POST", "/v1/subscriptions", { type });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "dedupeKey"]);
  });
});
