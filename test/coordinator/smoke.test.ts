import { describe, expect, it } from "vitest";
import { api, uniqueType } from "../helpers/api";

describe("smoke", () => {
  it("enqueues, claims and completes a job", async () => {
    const type = uniqueType();
    const enq = await api("POST", "/v1/jobs", { type, payload: { n: 1 } });
    expect(enq.status).toBe(201);
    const claim = await api("POST", "/v1/claim", { worker: "w1", types: [type] });
    expect(claim.status).toBe(200);
    expect(claim.body.jobs).toHaveLength(1);
    const job = claim.body.jobs[0];
    const done = await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: job.leaseToken, result: { ok: 1 } });
    expect(done.status).toBe(200);
    expect(done.body.job.state).toBe("completed");
  });
});
