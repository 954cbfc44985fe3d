/**
 * ctx.log lines kept with the job (docs/handlers.md "Logs kept with the job"): the
 * newest 100 per job, each clipped to 2 KiB, from every attempt, deleted with
 * the job; GET /v1/jobs/{id}/logs; a pull worker's POST /v1/jobs/{id}/logs.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { homeOfJobId } from "../../src/job/home";
import { LOG_LINE_MAX_BYTES } from "../../src/job/log-lines";
import { api, uniqueType, waitForJob } from "../helpers/api";
import { env } from "../helpers/scope";

const logsOf = async (id: string) => (await api("GET", `/v1/jobs/${id}/logs`)).body.items as { at: number; attempt: number; message: string; fields: unknown }[];
const bytes = (s: string) => new TextEncoder().encode(s).length;

describe("logs kept with the job", () => {
  it("a pushed handler's lines of every attempt are kept, oldest first, with their attempt and fields", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "test.log", payload: { lines: 2, failFirst: true } })).body.job.id;
    await waitForJob(id, (j) => j.state === "completed");
    const lines = await logsOf(id);
    expect(lines.map((l) => [l.attempt, l.message, l.fields])).toEqual([
      [1, "attempt 1 line 1", { i: 1 }],
      [1, "attempt 1 line 2", { i: 2 }],
      [2, "attempt 2 line 1", { i: 1 }],
      [2, "attempt 2 line 2", { i: 2 }],
    ]);
    expect(lines.every((l) => typeof l.at === "number" && l.at > 0)).toBe(true);
  });

  it("keeps the newest 100, clips a long line to 2 KiB and keeps a line whose fields JSON cannot carry", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "test.log", payload: { lines: 150, big: true } })).body.job.id;
    await waitForJob(id, (j) => j.state === "completed");
    const lines = await logsOf(id);
    expect(lines).toHaveLength(100);
    expect(lines[0]!.message).toBe("attempt 1 line 53");
    const long = lines[98]!;
    expect(long.message.endsWith("…")).toBe(true);
    expect(bytes(long.message)).toBeLessThanOrEqual(LOG_LINE_MAX_BYTES);
    expect(lines[99]).toMatchObject({ message: "odd fields", fields: { unserializable: expect.stringContaining("BigInt") } });
  });

  it("a job with no lines answers an empty list; an unknown job is 404", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "test.log", payload: { lines: 0 } })).body.job.id;
    await waitForJob(id, (j) => j.state === "completed");
    expect(await logsOf(id)).toEqual([]);
    expect((await api("GET", `/v1/jobs/${id}x/logs`)).status).toBe(404);
  });

  it("a pull worker's lines are fenced by its lease; bad input names the field and stores nothing; lines go with the job", async () => {
    const type = uniqueType("logs");
    const id = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job.id;
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const bad = await api("POST", `/v1/jobs/${id}/logs`, { leaseToken: leased.leaseToken, items: [{ at: 1, message: 7 }] });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "items[0].message"]);
    const stale = await api("POST", `/v1/jobs/${id}/logs`, { leaseToken: "0".repeat(32), items: [{ at: 1, message: "m" }] });
    expect([stale.status, stale.body.error.code]).toEqual([409, "lease_lost"]);
    expect(await logsOf(id)).toEqual([]);
    const ok = await api("POST", `/v1/jobs/${id}/logs`, { leaseToken: leased.leaseToken, items: [{ at: 5, message: "fetched", fields: { rows: 3 } }] });
    expect(ok).toMatchObject({ status: 200, body: { stored: 1 } });
    expect(await logsOf(id)).toEqual([{ at: 5, attempt: 1, message: "fetched", fields: { rows: 3 } }]);

    await api("POST", `/v1/jobs/${id}/complete`, { leaseToken: leased.leaseToken });
    // Prune in this job's object only (the API's prune reaches every object).
    const stub = env.SCOPE.getByName(homeOfJobId(id)!.name);
    expect(await stub.prune(Date.now() + 1000, ["completed"])).toBeGreaterThanOrEqual(1);
    const left = await runInDurableObject(stub, (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM job_log").one().n);
    expect(left).toBe(0);
  });
});
