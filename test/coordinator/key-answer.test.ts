/**
 * A keyed enqueue that finds its key held answers with the holder: `id` is the
 * id of the job in `job`, so a GET of it finds that job (docs/http-api.md).
 */
import { describe, expect, it } from "vitest";
import { api, uniqueScope, uniqueType } from "../helpers/api";

describe("an enqueue answered by its key's job", () => {
  it("answers that job's id, single and in a batch", async () => {
    const type = uniqueType("held");
    const scope = uniqueScope("held");
    const first = (await api("POST", "/v1/jobs", { type, payload: {}, scope, dedupeKey: "k" })).body;
    expect(first.created).toBe(true);
    const again = (await api("POST", "/v1/jobs", { type, payload: { n: 2 }, scope, dedupeKey: "k" })).body;
    expect(again).toMatchObject({ created: false, id: first.job.id, job: { id: first.job.id } });
    expect((await api("GET", `/v1/jobs/${again.id}`)).status).toBe(200);
    const batch = (await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: {}, scope, dedupeKey: "k" }, { type, payload: {}, scope: uniqueScope("other"), dedupeKey: "k" }], return: "jobs" })).body;
    expect(batch.results[0]).toMatchObject({ created: false, id: first.job.id });
    expect(batch.results[1].created).toBe(true);
    expect(batch.results[1].id).toBe(batch.results[1].job.id);
  });
});
