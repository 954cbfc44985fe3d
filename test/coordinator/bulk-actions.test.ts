/**
 * Bulk actions by filter (docs/http-api.md "Bulk actions"): `POST /v1/jobs/cancel` and `POST /v1/jobs/retry` act on
 * every job a filter matches across homes — scope objects from the catalog, the type's own shard read directly —
 * a page per call with a cursor; a dry run counts and changes nothing; refusals name the field and change nothing.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load";
import { QueueOps } from "../../src/coordinator/operations";
import { api, flushJobs, uniqueScope, uniqueType } from "../helpers/api";
import { env } from "../helpers/scope";

const enqueue = async (type: string, scope?: object, extra: object = {}) => (await api("POST", "/v1/jobs", { type, payload: {}, ...(scope ? { scope } : {}), ...extra })).body.job;
const state = async (id: string) => (await api("GET", `/v1/jobs/${id}`)).body.job;

/** A moment later than `at` by the clock (a spin, not a sleep: the next enqueue's createdAt is then past it). */
function after(at: number): void {
  while (Date.now() <= at) {
    // spin
  }
}

describe("bulk actions by filter", () => {
  it("cancel: a dry run counts; paged with a limit, every live job of the filter in every home is cancelled once", async () => {
    const type = uniqueType("bulkc");
    const scopes = [uniqueScope("b1"), uniqueScope("b2"), uniqueScope("b3")];
    const live: string[] = [];
    for (const scope of scopes) for (let i = 0; i < 2; i++) live.push((await enqueue(type, scope)).id);
    // Unscoped: in the type's own shard, which the action reads directly (not through the catalog).
    for (let i = 0; i < 2; i++) live.push((await enqueue(type)).id);
    const done = await enqueue(type, scopes[0]);
    await flushJobs(...live, done.id);
    // One running (claimed), one completed: the completed one is left alone.
    const claimed = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 2 })).body.jobs;
    expect(claimed).toHaveLength(2);
    await api("POST", `/v1/jobs/${claimed[1].id}/complete`, { leaseToken: claimed[1].leaseToken });
    const completed = claimed[1].id;
    const running = claimed[0];
    await flushJobs(...live, done.id);

    const dry = await api("POST", "/v1/jobs/cancel", { filter: { type }, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ changed: 8, skipped: 0, nextCursor: null });
    expect((await state(running.id)).state).toBe("running");

    let cursor: string | undefined;
    const pages: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await api("POST", "/v1/jobs/cancel", { filter: { type }, limit: 3, reason: "cleanup", ...(cursor ? { cursor } : {}) });
      expect(r.status).toBe(200);
      pages.push(r.body.changed);
      cursor = r.body.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(pages.reduce((a, b) => a + b, 0)).toBe(8);
    expect(Math.max(...pages)).toBeLessThanOrEqual(3);
    for (const id of [...live, done.id].filter((id) => id !== completed)) expect(await state(id)).toMatchObject({ state: "cancelled", cancelReason: "cleanup" });
    expect((await state(completed)).state).toBe("completed");
    // The running job's holder has lost it.
    const beat = await api("POST", `/v1/jobs/${running.id}/heartbeat`, { leaseToken: running.leaseToken });
    expect([beat.status, beat.body.error.code]).toEqual([409, "lease_lost"]);
    // Again: nothing left to cancel.
    expect((await api("POST", "/v1/jobs/cancel", { filter: { type } })).body).toEqual({ changed: 0, skipped: 0, nextCursor: null });
  });

  it("retry: the filter's state, failure kind, tag and creation time narrow it; a job whose key a live job holds is skipped", async () => {
    const type = uniqueType("bulkr");
    const scope = uniqueScope("br");
    const fail = async (fatal: boolean, extra: object = {}) => {
      const job = await enqueue(type, scope, { maxAttempts: 1, ...extra });
      await flushJobs(job.id);
      const [j] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
      expect(j.id).toBe(job.id);
      await api("POST", `/v1/jobs/${j.id}/fail`, { leaseToken: j.leaseToken, error: "x", ...(fatal ? { fatal: true } : {}) });
      return job;
    };
    const fatal = await fail(true, { tags: ["t1"] });
    after(fatal.createdAt);
    const exhausted = await fail(false, { tags: ["t1"] });
    const keyed = await fail(true, { dedupeKey: "k" });
    const holder = await enqueue(type, scope, { dedupeKey: "k" }); // a live job holds the key now
    const cancelled = (await api("POST", `/v1/jobs/${(await enqueue(type, scope)).id}/cancel`, {})).body.job;
    await flushJobs(fatal.id);

    const q = (filter: object) => api("POST", "/v1/jobs/retry", { filter: { type, ...filter } });
    expect((await q({ failureKind: "fatal", tag: "t1" })).body).toMatchObject({ changed: 1, skipped: 0 });
    expect((await state(fatal.id)).state).toBe("pending");
    expect((await state(exhausted.id)).state).toBe("failed");
    // Created strictly after the first: the exhausted one, and the keyed one (skipped: its key is held).
    expect((await q({ state: "failed", createdAfter: fatal.createdAt })).body).toMatchObject({ changed: 1, skipped: 1 });
    expect((await state(exhausted.id)).state).toBe("pending");
    expect((await state(keyed.id)).state).toBe("failed");
    expect((await state(holder.id)).state).toBe("pending");
    // A list of states; the cancelled one comes back too.
    expect((await q({ state: ["cancelled", "superseded"] })).body).toMatchObject({ changed: 1, skipped: 0 });
    expect((await state(cancelled.id)).state).toBe("pending");
    // The listing takes the same time filters.
    const listed = await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}&createdAfter=${fatal.createdAt}&state=failed`);
    expect(listed.body.items.map((j: { id: string }) => j.id)).toEqual([keyed.id]);
  });

  it("refuses, naming the field and changing nothing: states the action does not act on, a failure kind for cancel, bad fields, a foreign cursor", async () => {
    const type = uniqueType("bulkx");
    const scope = uniqueScope("bx");
    const job = await enqueue(type, scope);
    await flushJobs(job.id);
    const refused = [
      ["cancel", { filter: { type, state: "completed" } }, "filter.state"],
      ["cancel", { filter: { type, failureKind: "fatal" } }, "filter.failureKind"],
      ["retry", { filter: { type, state: ["pending", "running"] } }, "filter.state"],
      ["retry", { filter: { type }, reason: "no" }, "reason"],
      ["cancel", { filter: { type, state: "done" } }, "filter.state"],
      ["cancel", { filter: { type, scopeType: "x" } }, "filter.scopeId"],
      ["cancel", { filter: { type, colour: "red" } }, "filter"],
      ["cancel", { filter: { type }, limit: 0 }, "limit"],
      ["cancel", { filter: { type }, cursor: "nope" }, "cursor"],
      ["cancel", {}, "filter"],
    ] as const;
    for (const [action, body, field] of refused) {
      const r = await api("POST", `/v1/jobs/${action}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.details.map((d: { path: string }) => d.path).join(" "), JSON.stringify(body)).toContain(field);
    }
    expect((await state(job.id)).state).toBe("pending");
  });

  it("POST /v1/retry {type} reads the type's own objects directly: a failure the catalog has not heard of is retried, and a waiting claim gets it", async () => {
    const type = uniqueType("retry-direct");
    const id = (await enqueue(type)).id as string;
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    expect((await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: leased.leaseToken, error: "boom", fatal: true })).status).toBe(200);
    // A catalog that lists no home at all, as one a second behind the failure.
    const blind = { getByName: (name: string) => new Proxy(env.CATALOG.getByName(name), { get: (t, k) => (k === "listHomes" ? async () => [] : Reflect.get(t, k)) }) };
    const ops = new QueueOps({ ...env, CATALOG: blind } as never, loadConfig(env));
    const waiting = api("POST", "/v1/claim", { worker: "w2", types: [type], waitMs: 5_000 });
    expect(await ops.fanOut.retryFailed({ type })).toMatchObject({ retried: 1, skipped: 0 });
    expect((await waiting).body.jobs.map((j: { id: string }) => j.id)).toEqual([id]);
    // Paged, the same: the type's shard, then the catalog's homes.
    const again = (await enqueue(type)).id as string;
    const [l2] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    await api("POST", `/v1/jobs/${again}/fail`, { leaseToken: l2.leaseToken, error: "boom", fatal: true });
    expect(await ops.fanOut.retryFailed({ type, limit: 10 })).toMatchObject({ retried: 1, nextCursor: null });
  });
});
