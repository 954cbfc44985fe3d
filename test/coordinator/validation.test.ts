import { describe, expect, it } from "vitest";
import { api, uniqueType } from "../helpers/api";

async function expectRefused(path: string, body: unknown, field: string, code = "invalid_request", status = 400) {
  const r = await api("POST", path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.code).toBe(code);
  expect(typeof r.body.error.message).toBe("string");
  if (code === "invalid_request") expect(r.body.error.details.map((d: any) => d.path)).toContain(field);
  else expect(r.body.error.details.path).toBe(field);
  return r;
}

describe("bad input gets a clear error naming the field, and changes nothing", () => {
  it.each([
    [{ payload: {} }, "type"],
    [{ type: "", payload: {} }, "type"],
    [{ type: "t" }, "payload"],
    [{ type: "t", payload: [1] }, "payload"],
    [{ type: "t", payload: "x" }, "payload"],
    [{ type: "t", payload: null }, "payload"],
    [{ type: "t", payload: {}, maxAttempts: 0 }, "maxAttempts"],
    [{ type: "t", payload: {}, maxAttempts: 1.5 }, "maxAttempts"],
    [{ type: "t", payload: {}, priority: "high" }, "priority"],
    [{ type: "t", payload: {}, scope: { type: "A" } }, "scope.id"],
    [{ type: "t", payload: {}, scope: { type: "A", id: "" } }, "scope.id"],
    [{ type: "t", payload: {}, dedupeKey: "" }, "dedupeKey"],
    [{ type: "t", payload: {}, id: "has/slash" }, "id"],
    [{ type: "t", payload: {}, tags: [""] }, "tags[0]"],
    [{ type: "t", payload: {}, delayMs: -1 }, "delayMs"],
    [{ type: "t", payload: {}, timeoutMs: 10 }, "timeoutMs"],
    [{ type: "t", payload: {}, typo: 1 }, "typo"],
  ])("enqueue %j → 400 naming %s", async (body, field) => {
    await expectRefused("/v1/jobs", body, field);
  });

  it("a missing payload is said to be missing, in words", async () => {
    const r = await expectRefused("/v1/jobs", { type: "t" }, "payload");
    expect(r.body.error.details).toEqual([{ path: "payload", message: "is required: a JSON object ({} when there is nothing to say)" }]);
    const scalar = await expectRefused("/v1/jobs", { type: "t", payload: 5 }, "payload");
    expect(scalar.body.error.details[0].message).toBe("must be a JSON object, got a number");
  });

  it("after completion, heartbeat, complete and fail all answer 409 already_terminal", async () => {
    const type = uniqueType("late");
    expect((await api("POST", "/v1/jobs", { type, payload: {} })).status).toBe(201);
    const [job] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    expect((await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: job.leaseToken })).status).toBe(200);
    for (const [path, body] of [
      ["heartbeat", { leaseToken: job.leaseToken }],
      ["complete", { leaseToken: job.leaseToken }],
      ["fail", { leaseToken: job.leaseToken, error: "late" }],
    ] as const) {
      const r = await api("POST", `/v1/jobs/${job.id}/${path}`, body);
      expect([path, r.status, r.body.error.code]).toEqual([path, 409, "already_terminal"]);
    }
  });

  it("refuses a body that is not JSON", async () => {
    const r = await api("POST", "/v1/jobs", "{not json");
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/not valid JSON/);
  });

  it("refuses numbers JSON cannot carry back, naming the nested field", async () => {
    const r = await api("POST", "/v1/jobs", '{"type":"t","payload":{"a":{"b":[1,1e400]}}}');
    expect(r.status).toBe(400);
    expect(r.body.error.details[0]).toEqual({ path: "payload.a.b[1]", message: "Infinity is not a finite number" });
  });

  it("refuses absurd nesting", async () => {
    const deep = "[".repeat(200) + "]".repeat(200);
    const r = await api("POST", "/v1/jobs", `{"type":"t","payload":{"d":${deep}}}`);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/nested deeper than 64/);
  });

  it("keeps __proto__ and constructor keys as plain data", async () => {
    const type = uniqueType();
    const r = await api("POST", "/v1/jobs", `{"type":"${type}","payload":{"__proto__":{"polluted":true},"constructor":{"x":1}}}`);
    expect(r.status).toBe(201);
    expect(Object.keys(r.body.job.payload)).toEqual(["__proto__", "constructor"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("413 payload_too_large over 128 KiB, naming the field, and nothing is written", async () => {
    const type = uniqueType();
    await expectRefused("/v1/jobs", { type, payload: { blob: "x".repeat(131_072) } }, "payload", "payload_too_large", 413);
    await expectRefused(
      "/v1/jobs/batch",
      { jobs: [{ type, payload: {} }, { type, payload: { blob: "é".repeat(70_000) } }] },
      "jobs[1].payload",
      "payload_too_large",
      413,
    );
    const claim = await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 10 });
    expect(claim.body.jobs).toEqual([]);
  });

  it("a payload just under the limit is accepted", async () => {
    const r = await api("POST", "/v1/jobs", { type: uniqueType(), payload: { blob: "x".repeat(131_072 - 20) } });
    expect(r.status).toBe(201);
  });

  it("claim, complete and fail validate their bodies", async () => {
    await expectRefused("/v1/claim", {}, "worker");
    await expectRefused("/v1/claim", { worker: "w", limit: 101 }, "limit");
    await expectRefused("/v1/claim", { worker: "w", leaseMs: 5 }, "leaseMs");
    await expectRefused("/v1/claim", { worker: "w", types: [] }, "types");
    await expectRefused("/v1/jobs/x.y/complete", {}, "leaseToken");
    await expectRefused("/v1/jobs/x.y/complete", { leaseToken: "t", result: [1] }, "result");
    await expectRefused("/v1/jobs/x.y/fail", { leaseToken: "t" }, "error");
    await expectRefused("/v1/jobs/x.y/fail", { leaseToken: "t", error: "e", retryAfterMs: -5 }, "retryAfterMs");
    await expectRefused("/v1/jobs/x.y/heartbeat", { leaseToken: 5 }, "leaseToken");
    await expectRefused("/v1/prune", {}, "olderThan");
    await expectRefused("/v1/prune", { olderThan: 1, states: ["pending"] }, "states[0]");
    await expectRefused("/v1/scopes/A/1/cancel", { pendingOnly: "yes" }, "pendingOnly");
  });

  it("unknown routes answer 404 in the error shape", async () => {
    const r = await api("GET", "/v1/nope");
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("not_found");
  });
});

describe("release", () => {
  it("gives a leased job back: pending, due now, its attempt not counted; a stale token is refused", async () => {
    const type = uniqueType("release");
    const id = (await api("POST", "/v1/jobs", { type, payload: {} })).body.job.id;
    const [job] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const before = Date.now();
    const r = await api("POST", `/v1/jobs/${id}/release`, { leaseToken: job.leaseToken });
    expect(r.status).toBe(200);
    expect(r.body.job).toMatchObject({ state: "pending", attempts: 0 });
    expect(r.body.job.runAt).toBeGreaterThanOrEqual(before);
    expect(r.body.job.runAt).toBeLessThanOrEqual(Date.now());
    const again = await api("POST", `/v1/jobs/${id}/release`, { leaseToken: job.leaseToken });
    expect([again.status, again.body.error.code]).toEqual([409, "lease_lost"]);
  });

  it("a pending follower of the key supersedes the released job, as for fail", async () => {
    const type = uniqueType("release-key");
    const first = (await api("POST", "/v1/jobs", { type, payload: { n: 1 }, dedupeKey: "k", dedupeMode: "pending" })).body.job.id;
    const [job] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const follower = (await api("POST", "/v1/jobs", { type, payload: { n: 2 }, dedupeKey: "k", dedupeMode: "pending" })).body.job.id;
    expect(follower).not.toBe(first);
    const r = await api("POST", `/v1/jobs/${first}/release`, { leaseToken: job.leaseToken });
    expect(r.body.job.state).toBe("superseded");
    expect(r.body.job.cancelReason).toBe(`superseded by ${follower}`);
  });
});
