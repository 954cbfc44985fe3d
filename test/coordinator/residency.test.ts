/**
 * Data residency (docs/operating.md "Data residency"): the vitest config keeps scope type EuTenant's objects in the
 * EU jurisdiction. The local runtime cannot place an object (workerd: "Jurisdiction restrictions are not implemented"),
 * so here the objects are reached plainly, once said in a log line; what is tested on it is everything else: which
 * jurisdiction each object is asked in (a namespace that records it), and the refusals of what would carry a payload
 * from one jurisdiction to another — a child job, an event wait, a batch, a schedule — each naming the field or
 * call, with nothing written.
 */
import { describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config/load";
import { inJurisdiction, jurisdictionOfHome, residentEnv } from "../../src/residency";
import { scopeHome, typeHome } from "../../src/job/home";
import type { Env } from "../../src/env";
import { api, uniqueType } from "../helpers/api";
import { env, newJob, T0 } from "../helpers/scope";

const START = { at: T0, seed: "00112233445566778899aabbccddeeff" };

/** A namespace that records the jurisdiction each name was asked in. */
function recording(implemented = true) {
  const asked: string[] = [];
  const make = (j: string | null): any => ({
    jurisdiction(x: string) {
      if (!implemented) throw new Error("Jurisdiction restrictions are not implemented in workerd.");
      return make(x);
    },
    getByName: (name: string) => asked.push(`${j ?? "-"} ${name}`),
    idFromName: (name: string) => asked.push(`${j ?? "-"} id ${name}`),
  });
  return { ns: make(null), asked };
}

describe("routing the objects", () => {
  it("a scope type's objects are asked in its jurisdiction, the rest in the queue's; without residency nothing changes", () => {
    const config = parseConfig({ residency: { jurisdiction: "fedramp", scopeTypes: { EuTenant: "eu" } } });
    const scope = recording();
    const catalog = recording();
    const e = residentEnv(Object.create({ SCOPE: scope.ns, CATALOG: catalog.ns }) as Env, config);
    e.SCOPE.getByName(scopeHome({ type: "EuTenant", id: "a" }).name);
    e.SCOPE.getByName(scopeHome({ type: "Shop", id: "b" }).name);
    e.SCOPE.idFromName(typeHome("email.send", 0).name);
    e.CATALOG.getByName("catalog");
    expect(scope.asked).toEqual(["eu scope:EuTenant:a", "fedramp scope:Shop:b", "fedramp id type:email.send:0"]);
    expect(catalog.asked).toEqual(["fedramp catalog"]);
    const plain = { SCOPE: recording().ns } as unknown as Env;
    expect(residentEnv(plain, parseConfig({}))).toBe(plain);
    expect(jurisdictionOfHome(config, scopeHome({ type: "EuTenant", id: "x" }).name)).toBe("eu");
  });

  it("where the runtime has no jurisdictions (the local one), the object is reached plainly and that is logged once", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { ns, asked } = recording(false);
    const a = inJurisdiction(ns, "eu");
    a.getByName("x");
    inJurisdiction(recording(false).ns, "eu");
    expect(asked).toEqual(["- x"]);
    expect(warn.mock.calls.filter((c) => String(c[0]).includes("residency:not_enforced_here")).length).toBeLessThanOrEqual(1);
    warn.mockRestore();
  });
});

describe("what would cross a jurisdiction is refused", () => {
  const eu = () => ({ type: "EuTenant", id: crypto.randomUUID() });

  it("a batch with jobs in two jurisdictions: 400 naming the job, nothing written", async () => {
    const type = uniqueType("resid");
    const r = await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: {}, scope: eu() }, { type, payload: {} }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^jobs\[1\]\.scope: a batch's jobs live in one jurisdiction, and this one's is not the first job's: it would carry data from the eu jurisdiction to no jurisdiction/);
    expect((await api("GET", `/v1/jobs?type=${type}`)).body.items).toHaveLength(0);
    // One jurisdiction is fine.
    expect((await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: {}, scope: eu() }, { type, payload: {}, scope: eu() }] })).status).toBe(200);
  });

  it("a schedule of an EU scope (its object holds the payload elsewhere): 400 naming scope; in the config, refused at start", async () => {
    const r = await api("PUT", "/v1/schedules/resid-nightly", { type: "demo.noop", everyMs: 3_600_000, scope: eu() });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^scope: scope type EuTenant lives in the eu jurisdiction and the schedules' object in no jurisdiction/);
    expect(() => parseConfig({ residency: { scopeTypes: { EuTenant: "eu" } }, schedules: { n: { type: "t", everyMs: 3_600_000, scope: { type: "EuTenant", id: "a" } } } })).toThrow(/schedules.n.scope: scope type EuTenant lives in the eu jurisdiction/);
  });

  it("a job in an EU scope fails its ctx.invoke of a child elsewhere, and its ctx.waitForEvent (the registry is the queue's)", async () => {
    for (const w of [
      { seq: 0, kind: "invoke" as const, name: "child", startedAt: T0, request: { type: "demo.noop", payload: {} } },
      { seq: 0, kind: "event" as const, name: "order.paid", startedAt: T0, match: { id: 1 } },
    ]) {
      const home = scopeHome(eu()).name;
      const stub = env.SCOPE.getByName(home);
      await stub.enqueue([newJob(home)]);
      const [held] = await stub.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
      const out = await stub.wait(held!.id, held!.leaseToken, { waits: [w], start: START });
      expect(out.ok && out.job.state).toBe("failed");
      expect(out.ok && out.job.lastError).toMatch(w.kind === "invoke" ? /^ctx\.invoke\("child"\): it would carry data from the eu jurisdiction to no jurisdiction/ : /^ctx\.waitForEvent\("order\.paid"\): it would carry data from the eu jurisdiction/);
    }
  });
});
