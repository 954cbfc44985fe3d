/**
 * Undeclared job types: under `strictTypes` an enqueue, claim or schedule of
 * a type the config does not declare is refused with the nearest declared
 * names; without it (the default) the type is accepted and, once it has due
 * jobs nothing will run, flagged in stats.
 */
import { env as workersEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/coordinator/app";
import { nearestTypes } from "../../src/config/known-types";
import { parseConfig } from "../../src/config/load";
import { api, flushJobs, TOKEN, uniqueScope, uniqueType } from "../helpers/api";

const baseEnv = workersEnv as unknown as Record<string, unknown> & { EDGEQUEUE_CONFIG: Record<string, unknown> };
const strictEnv = { ...baseEnv, EDGEQUEUE_CONFIG: { ...baseEnv.EDGEQUEUE_CONFIG, strictTypes: true } };

async function strict(method: string, path: string, body: unknown) {
  const res = await createApp().request(path, { method, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body) }, strictEnv);
  return { status: res.status, body: (await res.json()) as any };
}

describe("strictTypes = true", () => {
  it("refuses an enqueue of an undeclared type, naming the field and the nearest declared types, and writes nothing", async () => {
    const scope = uniqueScope("strict");
    const r = await strict("POST", "/v1/jobs", { type: "demo.ecko", payload: {}, scope });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.details).toEqual([{ path: "type", message: expect.stringContaining('did you mean "demo.echo"') }]);
    const stored = await createApp().request(`/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}`, { headers: { authorization: `Bearer ${TOKEN}` } }, strictEnv);
    expect(((await stored.json()) as any).items).toEqual([]);
  });

  it("refuses a whole batch when one item's type is undeclared, naming its index", async () => {
    const scope = uniqueScope("strict-batch");
    const r = await strict("POST", "/v1/jobs/batch", { jobs: [{ type: "demo.echo", payload: {}, scope }, { type: "demo.nop", payload: {}, scope }] });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0]).toMatchObject({ path: "jobs[1].type", message: expect.stringContaining('"demo.noop"') });
    const stored = await createApp().request(`/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}`, { headers: { authorization: `Bearer ${TOKEN}` } }, strictEnv);
    expect(((await stored.json()) as any).items).toEqual([]);
  });

  it("refuses a claim and a schedule of an undeclared type; declared ones pass", async () => {
    const claim = await strict("POST", "/v1/claim", { worker: "w", types: ["sharded.job", "sharded.jobs"] });
    expect(claim.status).toBe(400);
    expect(claim.body.error.details).toEqual([{ path: "types[1]", message: expect.stringContaining('"sharded.job"') }]);
    expect((await strict("POST", "/v1/claim", { worker: "w", types: ["sharded.job"] })).status).toBe(200);
    const sched = await strict("PUT", "/v1/schedules/strict-typo", { type: "demo.tik", everyMs: 60_000 });
    expect(sched.status).toBe(400);
    expect(sched.body.error.details[0]).toMatchObject({ path: "type", message: expect.stringContaining('"demo.tick"') });
  });

  it("a config schedule of an undeclared type stops startup under strictTypes", () => {
    expect(() => parseConfig({ strictTypes: true, schedules: { nightly: { type: "report.build", cron: "0 3 * * *" } } })).toThrow(/schedules\.nightly\.type: report\.build is not a declared type/);
    expect(() => parseConfig({ schedules: { nightly: { type: "report.build", cron: "0 3 * * *" } } })).not.toThrow();
  });

  it("suggests only names that are close", () => {
    expect(nearestTypes("email.sned", ["email.send", "email.bounce", "sms.send"])).toEqual(["email.send"]);
    expect(nearestTypes("zzz", ["email.send"])).toEqual([]);
  });
});

describe("without strictTypes: types nothing will run are flagged", () => {
  it("due jobs of an undeclared type no claim asked for are unhandled in stats and metrics; a claim for it clears the flag", async () => {
    const type = uniqueType("typo");
    const scope = uniqueScope("typo");
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await api("POST", "/v1/jobs", { type, payload: {}, scope })).body.job.id);
    await flushJobs(...ids);
    expect((await api("GET", `/v1/stats?type=${type}`)).body).toMatchObject({ pending: 2, unhandledTypes: [type] });
    expect((await api("GET", "/v1/stats")).body.unhandledTypes).toContain(type);
    expect((await api("GET", `/v1/metrics?type=${type}`)).body.types[0]).toMatchObject({ type, unhandled: true });

    // A worker asks for it: it is being pulled, one job still waits, and nothing is flagged.
    expect((await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 1 })).body.jobs).toHaveLength(1);
    await flushJobs(...ids);
    expect((await api("GET", `/v1/stats?type=${type}`)).body).toMatchObject({ pending: 1, unhandledTypes: [] });
  });

  it("declared pull types, scheduled-only and pushed types are never flagged", async () => {
    const scope = uniqueScope("declared");
    const declared = (await api("POST", "/v1/jobs", { type: "sharded.job", payload: {}, scope })).body.job.id;
    const later = uniqueType("later");
    const delayed = (await api("POST", "/v1/jobs", { type: later, payload: {}, scope, delayMs: 3_600_000 })).body.job.id;
    await flushJobs(declared, delayed);
    const stats = (await api("GET", "/v1/stats")).body;
    expect(stats.unhandledTypes).not.toContain("sharded.job");
    expect(stats.unhandledTypes).not.toContain(later);
    await api("POST", `/v1/scopes/${scope.type}/${scope.id}/cancel`, {});
  });
});
