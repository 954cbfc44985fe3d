/**
 * Cancel for the newest (docs/guards.md "Cancel for the newest"): dedupeMode cancelRunning ends every live job of
 * the key for the new one — a running one's handler aborted, its holder's next call lease_lost — and cancelPending
 * ends only the queued ones, the new job waiting behind the one in flight. Pushed to the test handler's `test.span`
 * (it honours its signal and records its span), and pulled over HTTP.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { homeOfJobId } from "../../src/job/home";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, isTerminal, uniqueScope, uniqueType, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";
import { env } from "../helpers/scope";

const get = async (id: string) => (await api("GET", `/v1/jobs/${id}`)).body.job;

async function enqueue(body: Record<string, unknown>) {
  const r = await api("POST", "/v1/jobs", body);
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body.job as { id: string; state: string };
}

/** runningOfKey: the key's running jobs in its object, read in one of its own turns (a consistent state). */
async function runningOfKey(id: string, key: string): Promise<number> {
  const stub = env.SCOPE.getByName(homeOfJobId(id)!.name);
  return runInDurableObject(stub, (o: ScopeDO) => o.store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job WHERE dedupe_key = ? AND state = 'running'", key).one().n);
}

describe("cancelRunning", () => {
  it("a new job of the key supersedes the running one — its handler aborted, an event — and runs instead", async () => {
    const scope = uniqueScope();
    const key = `k-${crypto.randomUUID().slice(0, 8)}`;
    const first = await enqueue({ type: "test.span", payload: { ms: 5_000, key }, scope, dedupeKey: key, dedupeMode: "cancelRunning" });
    await vi.waitFor(async () => expect((await get(first.id)).state).toBe("running"));
    const second = await enqueue({ type: "test.span", payload: { ms: 5, key }, scope, dedupeKey: key, dedupeMode: "cancelRunning" });
    expect(second.id).not.toBe(first.id);
    const old = await get(first.id);
    expect(old).toMatchObject({ state: "superseded", cancelReason: "superseded by a newer job of its key (cancelRunning)" });
    expect(old.finishedAt).not.toBeNull();
    expect(await waitForJob(second.id, isTerminal)).toMatchObject({ state: "completed", attempts: 1 });
    // The first handler's signal fired: its span ended early, aborted.
    await vi.waitFor(async () => expect((await probe.spans(key)).find((s) => s.id === first.id)?.aborted).toBeTruthy());
    const firstSpan = (await probe.spans(key)).find((s) => s.id === first.id)!;
    expect(firstSpan.finishedAt - firstSpan.startedAt).toBeLessThan(5_000);
    expect((await probe.events(first.id)).map((e) => e.event)).toContain("job:superseded");
  });

  it("under a burst of 20, the key never has two jobs running, and exactly the newest is left to complete", async () => {
    const scope = uniqueScope();
    const key = `burst-${crypto.randomUUID().slice(0, 8)}`;
    const ids: string[] = [];
    let max = 0;
    let sampling = true;
    // Sampled in the object's own turns while the burst lands: each enqueue is one transaction.
    const sampler = (async () => {
      while (sampling) {
        if (ids[0]) max = Math.max(max, await runningOfKey(ids[0], key));
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const j = await enqueue({ type: "test.span", payload: { ms: 50, key, i }, scope, dedupeKey: key, dedupeMode: "cancelRunning" });
        ids.push(j.id);
        max = Math.max(max, await runningOfKey(j.id, key));
      }),
    );
    const ends = await Promise.all(ids.map((id) => waitForJob(id, isTerminal)));
    sampling = false;
    await sampler;
    expect(max).toBeLessThanOrEqual(1);
    expect(new Set(ids).size).toBe(20);
    const states = ends.map((j) => j.state).sort();
    expect(states.filter((s) => s === "completed")).toHaveLength(1);
    expect(states.filter((s) => s === "superseded")).toHaveLength(19);
    // The one completed is the newest the object took: created last.
    const done = ends.find((j) => j.state === "completed")!;
    expect(Math.max(...ends.map((j) => j.createdAt))).toBe(done.createdAt);
  });
});

describe("cancelPending", () => {
  it("keeps the running job; a new job ends the queued one and waits behind the running one (pulled)", async () => {
    const type = uniqueType("pull");
    const key = "k";
    const options = { type, dedupeKey: key, dedupeMode: "cancelPending" };
    const a = await enqueue({ ...options, payload: { n: 1 } });
    const leased = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 })).body.jobs;
    expect(leased.map((j: { id: string }) => j.id)).toEqual([a.id]);
    const b = await enqueue({ ...options, payload: { n: 2 } });
    const c = await enqueue({ ...options, payload: { n: 3 } });
    expect(await get(a.id)).toMatchObject({ state: "running" });
    expect(await get(b.id)).toMatchObject({ state: "superseded", cancelReason: "superseded by a newer job of its key (cancelPending)" });
    expect(await get(c.id)).toMatchObject({ state: "pending", payload: { n: 3 } });
    // The follower waits behind the running one…
    expect((await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 })).body.jobs).toEqual([]);
    expect((await api("POST", `/v1/jobs/${a.id}/complete`, { leaseToken: leased[0].leaseToken, result: {} })).status).toBe(200);
    // …and runs once it ended.
    const next = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 })).body.jobs;
    expect(next.map((j: { id: string }) => j.id)).toEqual([c.id]);
  });

  it("cancelRunning, pulled: the holder of the superseded lease is refused lease_lost, and the new job is due at once", async () => {
    const type = uniqueType("pull");
    const options = { type, dedupeKey: "k", dedupeMode: "cancelRunning" };
    const a = await enqueue({ ...options, payload: {} });
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 })).body.jobs;
    const b = await enqueue({ ...options, payload: {} });
    const beat = await api("POST", `/v1/jobs/${a.id}/heartbeat`, { leaseToken: leased.leaseToken });
    expect(beat.status).toBe(409);
    expect(beat.body.error.code).toBe("lease_lost");
    expect((await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 5 })).body.jobs.map((j: { id: string }) => j.id)).toEqual([b.id]);
  });
});

describe("refused", () => {
  it("coalesce with a cancel mode is a 400 naming coalesce; a key live under another mode a 409", async () => {
    const type = uniqueType();
    const bad = await api("POST", "/v1/jobs", { type, payload: {}, dedupeKey: "k", dedupeMode: "cancelRunning", coalesce: "latest" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("coalesce");
    await enqueue({ type, payload: {}, dedupeKey: "k" });
    const other = await api("POST", "/v1/jobs", { type, payload: {}, dedupeKey: "k", dedupeMode: "cancelPending" });
    expect(other.status).toBe(409);
    expect(other.body.error.message).toMatch(/live under mode active.*asks for mode cancelPending/);
  });
});
