/**
 * POST /v1/cancel {type, dedupeKeys, scope?, reason?}: the live jobs of a type
 * under those keys, wherever the keys route — running ones aborted with the
 * reason (docs/http-api.md "The HTTP API").
 */
import { describe, expect, it, vi } from "vitest";
import { api, uniqueScope, uniqueType, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";

describe("cancel by dedupe keys", () => {
  it("cancels the pending and running jobs under the keys, and only those; a holder's next call is lease_lost (cancelled)", async () => {
    const type = uniqueType("keys");
    const ids: Record<string, string> = {};
    for (const k of ["k1", "k2", "k3"]) ids[k] = (await api("POST", "/v1/jobs", { type, payload: {}, dedupeKey: k })).body.job.id;
    // Lease k2's job (it runs somewhere): claim until it is ours.
    let token = "";
    for (let i = 0; i < 5 && !token; i++) {
      for (const j of (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 3 })).body.jobs) {
        if (j.id === ids.k2) token = j.leaseToken;
        else await api("POST", `/v1/jobs/${j.id}/release`, { leaseToken: j.leaseToken });
      }
    }
    expect(token).not.toBe("");
    const r = await api("POST", "/v1/cancel", { type, dedupeKeys: ["k1", "k2", "nope"], reason: "operator: duplicate import" });
    expect(r).toMatchObject({ status: 200, body: { cancelled: 2 } });
    expect((await api("GET", `/v1/jobs/${ids.k1}`)).body.job).toMatchObject({ state: "cancelled", cancelReason: "operator: duplicate import" });
    expect((await api("GET", `/v1/jobs/${ids.k2}`)).body.job.state).toBe("cancelled");
    expect((await api("GET", `/v1/jobs/${ids.k3}`)).body.job.state).toBe("pending");
    const hb = await api("POST", `/v1/jobs/${ids.k2}/heartbeat`, { leaseToken: token });
    expect(hb.body.error).toMatchObject({ code: "lease_lost", details: { reason: "cancelled" } });
  });

  it("a running pushed job under a key in a scope is aborted in its handler with reason cancelled", async () => {
    const key = crypto.randomUUID();
    const scope = uniqueScope("keys");
    const id = (await api("POST", "/v1/jobs", { type: "test.span", payload: { ms: 10_000, key }, scope, dedupeKey: "sync" })).body.job.id;
    await waitForJob(id, (j) => j.state === "running");
    expect((await api("POST", "/v1/cancel", { type: "test.span", scope, dedupeKeys: ["sync"] })).body.cancelled).toBe(1);
    await vi.waitFor(async () => expect((await probe.spans(key))[0]?.aborted).toContain("cancelled"), { timeout: 5_000, interval: 20 });
  });

  it("refuses an empty key list or a missing type, naming the field, and cancels nothing", async () => {
    const empty = await api("POST", "/v1/cancel", { type: "x.y", dedupeKeys: [] });
    expect([empty.status, empty.body.error.details[0].path]).toEqual([400, "dedupeKeys"]);
    const untyped = await api("POST", "/v1/cancel", { dedupeKeys: ["a"] });
    expect([untyped.status, untyped.body.error.details[0].path]).toEqual([400, "type"]);
  });
});
