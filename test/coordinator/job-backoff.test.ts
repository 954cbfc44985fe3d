/** A job's own backoff on enqueue (README "The HTTP API"): shown on the job, checked like the config's. */
import { describe, expect, it } from "vitest";
import { api, uniqueType } from "../helpers/api";

describe("enqueue backoff", () => {
  it("is kept with the job (maxMs defaulting to the larger of baseMs and 5 minutes); a cap below its base is refused, naming the field", async () => {
    const type = uniqueType("bo");
    const fixed = (await api("POST", "/v1/jobs", { type, payload: {}, backoff: { kind: "fixed", baseMs: 2_000 } })).body.job;
    expect(fixed.backoff).toEqual({ kind: "fixed", baseMs: 2_000, maxMs: 300_000 });
    const plain = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job;
    expect(plain.backoff).toBeNull();
    const bad = await api("POST", "/v1/jobs", { type, payload: {}, backoff: { baseMs: 5_000, maxMs: 1_000 } });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "backoff.maxMs"]);
    const kind = await api("POST", "/v1/jobs", { type, payload: {}, backoff: { kind: "linear", baseMs: 1 } });
    expect([kind.status, kind.body.error.details[0].path]).toEqual([400, "backoff.kind"]);
  });
});
