/**
 * A listing by type reads the type's own homes directly (docs/http-api.md
 * "Listing jobs"): an unscoped job is listed the moment its enqueue answers,
 * with no wait for the catalog; scoped jobs of the type still come through it.
 */
import { describe, expect, it, vi } from "vitest";
import { api, flushJobs, uniqueScope, uniqueType } from "../helpers/api";

const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((j) => j.id);

describe("listing by type", () => {
  it("lists an unscoped job at once, while the catalog still holds its home's last report", async () => {
    const type = uniqueType("direct");
    await api("POST", "/v1/jobs", { type, payload: {} });
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    expect((await api("POST", `/v1/jobs/${leased.id}/complete`, { leaseToken: leased.leaseToken })).status).toBe(200);
    // The catalog now knows the home holds no pending job of the type, and its next report waits about a second.
    await flushJobs(leased.id);
    const b = (await api("POST", "/v1/jobs", { type, payload: { n: 2 } })).body.job.id;
    expect(ids(await api("GET", `/v1/jobs?type=${type}&state=pending`))).toEqual([b]);
  });

  it("pages through the type's homes and then the scopes the catalog names, each job once", async () => {
    const type = uniqueType("paged");
    const unscoped = [];
    for (let i = 0; i < 3; i++) unscoped.push((await api("POST", "/v1/jobs", { type, payload: { i } })).body.job.id);
    const scoped = (await api("POST", "/v1/jobs", { type, payload: {}, scope: uniqueScope("paged") })).body.job.id;
    // The scope's home reaches the listing through the catalog, about a second later.
    await vi.waitFor(async () => expect(ids(await api("GET", `/v1/jobs?type=${type}&limit=100`))).toContain(scoped), { timeout: 10_000, interval: 100 });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { body: { items: { id: string }[]; nextCursor: string | null } } = await api("GET", `/v1/jobs?type=${type}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...ids(r));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...unscoped, scoped].sort());
  });

  it("pages each job once and ends when a catalog page ends on the type's own home", async () => {
    const type = uniqueType("loop");
    const all: string[] = [];
    // One unscoped job (home type:<t>:0, read directly) and 18 scopes: the catalog's page after it is 19 homes
    // (20 minus the direct one), the last of them type:<t>:0 ("scope:" < "type:").
    all.push((await api("POST", "/v1/jobs", { type, payload: {} })).body.job.id);
    for (let i = 0; i < 18; i++) all.push((await api("POST", "/v1/jobs", { type, payload: { i }, scope: uniqueScope("loop") })).body.job.id);
    await flushJobs(...all);
    await vi.waitFor(async () => expect(ids(await api("GET", `/v1/jobs?type=${type}&limit=100`)).length).toBeGreaterThanOrEqual(19), { timeout: 10_000, interval: 100 });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: { body: { items: { id: string }[]; nextCursor: string | null } } = await api("GET", `/v1/jobs?type=${type}&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...ids(r));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor && pages < 5);
    expect(pages).toBeLessThan(5);
    expect(seen.sort()).toEqual([...all].sort());
  });
});
