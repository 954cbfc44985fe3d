/**
 * Listing filters (docs/http-api.md "The HTTP API"): `type` and `state` take
 * comma-separated lists, `failureKind` and `dedupeKey` filter too; bulk retry
 * takes `limit` and answers a cursor to go on with.
 */
import { describe, expect, it } from "vitest";
import { api, flushJobs, uniqueScope, uniqueType } from "../helpers/api";

async function failedJob(type: string, scope: object, fatal: boolean, dedupeKey?: string): Promise<string> {
  const id = (await api("POST", "/v1/jobs", { type, payload: {}, scope, maxAttempts: 1, ...(dedupeKey ? { dedupeKey } : {}) })).body.job.id;
  await flushJobs(id); // the catalog knows the scope, so the claim reaches it
  const [j] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
  expect(j.id).toBe(id);
  await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: j.leaseToken, error: "x", ...(fatal ? { fatal: true } : {}) });
  return id;
}

describe("listing filters", () => {
  it("state and type take lists; failureKind and dedupeKey narrow; bad items are named", async () => {
    const a = uniqueType("lista");
    const b = uniqueType("listb");
    const scope = uniqueScope("list");
    const fatal = await failedJob(a, scope, true, "k1");
    const exhausted = await failedJob(b, scope, false);
    const pending = (await api("POST", "/v1/jobs", { type: a, payload: {}, scope, dedupeKey: "k2" })).body.job.id;
    const q = (query: string) => api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}&${query}`);
    const ids = async (query: string) => (await q(query)).body.items.map((j: { id: string }) => j.id).sort();
    expect(await ids(`type=${a},${b}`)).toEqual([fatal, exhausted, pending].sort());
    expect(await ids(`state=failed,pending&type=${a}`)).toEqual([fatal, pending].sort());
    expect(await ids("failureKind=fatal")).toEqual([fatal]);
    expect(await ids("failureKind=retries_exhausted,fatal")).toEqual([fatal, exhausted].sort());
    expect(await ids("dedupeKey=k2")).toEqual([pending]);
    // Across homes (through the catalog): the same filters.
    await flushJobs(fatal);
    expect((await api("GET", `/v1/jobs?type=${a},${b}&failureKind=fatal`)).body.items.map((j: { id: string }) => j.id)).toEqual([fatal]);
    const bad = await q("state=failed,done");
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "state[1]"]);
  });

  it("bulk retry with a limit retries that many and answers a cursor; following it retries the rest once", async () => {
    const type = uniqueType("retry");
    const scopes = [uniqueScope("r1"), uniqueScope("r2")];
    const ids: string[] = [];
    for (const scope of scopes) for (let i = 0; i < 3; i++) ids.push(await failedJob(type, scope, true));
    await flushJobs(...ids);
    let cursor: string | undefined;
    const retried: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await api("POST", "/v1/retry", { type, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(r.status).toBe(200);
      retried.push(r.body.retried);
      cursor = r.body.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(retried.reduce((x, y) => x + y, 0)).toBe(6);
    expect(Math.max(...retried)).toBeLessThanOrEqual(2);
    for (const id of ids) expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("pending");
    const bad = await api("POST", "/v1/retry", { type, limit: 2, cursor: "nope" });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "cursor"]);
  });
});
