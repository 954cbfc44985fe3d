/**
 * A batch enqueue over several objects is all or none (README "Batch
 * enqueue"): each part is staged, the decider records commit or abort, every
 * part follows it — and an object whose coordinator vanished settles its stage
 * from its alarm by asking the decider. Failures are injected between the
 * coordinator and one object, the rest is the real runtime.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env as workersEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock";
import { createApp } from "../../src/coordinator/app";
import { scopeHome } from "../../src/job/home";
import { STAGE_ASK_MS, STAGE_TIMEOUT_MS } from "../../src/scope/batches/batch-stage";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, TOKEN, uniqueType } from "../helpers/api";
import { alarmAt, env, newJob, useClock, partsOf } from "../helpers/scope";

const baseEnv = workersEnv as unknown as Record<string, unknown>;
type Stub = ReturnType<typeof env.SCOPE.getByName>;

/**
 * An env whose SCOPE stubs fail `method` for one home; every other call reaches the real object. `lostAnswer`:
 * the first call of `method` does reach the object, and only its answer is lost.
 */
function failing(home: string, method: "stageBatch" | "commitBatch" | "commitDecidingBatch", { lostAnswer = false } = {}) {
  const real = env.SCOPE;
  let lost = 0;
  const SCOPE = {
    getByName(name: string) {
      const stub = real.getByName(name);
      if (name !== home) return stub;
      return new Proxy(stub, {
        get(target, prop) {
          const call = (...args: unknown[]) => (target as unknown as Record<string | symbol, (...a: unknown[]) => Promise<unknown>>)[prop]!(...args);
          if (prop === method && lostAnswer) {
            return async (...args: unknown[]) => {
              const answer = await call(...args);
              if (lost++ > 0) return answer;
              throw new Error(`injected: the answer of ${method} of ${home} was lost`);
            };
          }
          if (prop === method) return async () => Promise.reject(new Error(`injected: ${method} of ${home} failed`));
          // An RPC stub answers every property name with a remote method: forward calls as calls.
          return (...args: unknown[]) => (target as unknown as Record<string | symbol, (...a: unknown[]) => unknown>)[prop]!(...args);
        },
      });
    },
  };
  return { ...baseEnv, SCOPE };
}

async function batch(e: Record<string, unknown>, jobs: object[]) {
  const res = await createApp().request("/v1/jobs/batch", { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ jobs, return: "jobs" }) }, e);
  return { status: res.status, body: (await res.json()) as any };
}

const staged = (stub: Stub) => runInDurableObject(stub, (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job_stage").one().n);
const jobsIn = async (scope: { type: string; id: string }) => (await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}`)).body.items as { id: string; payload: { n: number } }[];

function threeScopes() {
  const scopes = [1, 2, 3].map((n) => ({ type: "Acct", id: `${crypto.randomUUID()}-${n}` }));
  const homes = scopes.map((s) => scopeHome(s).name);
  const order = [...homes].sort();
  return { scopes, homes, decider: order[0]!, notDecider: order[1]! };
}

describe("batches over several objects, all or none", () => {
  it("a part that cannot be staged: the batch answers an error and no object holds a job or a stage of it", async () => {
    const type = uniqueType("batch");
    const { scopes, homes, notDecider } = threeScopes();
    const r = await batch(failing(notDecider, "stageBatch"), scopes.map((scope, n) => ({ type, payload: { n }, scope })));
    expect(r.status).toBe(500);
    expect(r.body.error.message).toContain("nothing of it was written");
    for (const scope of scopes) expect(await jobsIn(scope)).toEqual([]);
    for (const home of homes) expect(await staged(env.SCOPE.getByName(home))).toBe(0);
  });

  it("a refused part (a key under another mode) aborts the staged others: nothing is written, the refusal names the item", async () => {
    const type = uniqueType("batch");
    const { scopes, homes } = threeScopes();
    expect((await api("POST", "/v1/jobs", { type, payload: {}, scope: scopes[2], dedupeKey: "k" })).status).toBe(201);
    const r = await api("POST", "/v1/jobs/batch", { jobs: scopes.map((scope, n) => ({ type, payload: { n }, scope, ...(n === 2 ? { dedupeKey: "k", dedupeMode: "pending" } : {}) })) });
    expect(r.status).toBe(409);
    expect(r.body.error.details).toMatchObject({ path: "jobs[2].dedupeKey", index: 2 });
    expect(await jobsIn(scopes[0]!)).toEqual([]);
    expect(await jobsIn(scopes[1]!)).toEqual([]);
    for (const home of homes) expect(await staged(env.SCOPE.getByName(home))).toBe(0);
  });

  it("the decider's own part refused: it records abort, the staged others are dropped, nothing is written", async () => {
    const type = uniqueType("batch");
    const { scopes, homes, decider } = threeScopes();
    const mine = homes.indexOf(decider);
    expect((await api("POST", "/v1/jobs", { type, payload: {}, scope: scopes[mine], dedupeKey: "k" })).status).toBe(201);
    const r = await api("POST", "/v1/jobs/batch", { jobs: scopes.map((scope, n) => ({ type, payload: { n }, scope, ...(n === mine ? { dedupeKey: "k", dedupeMode: "pending" } : {}) })) });
    expect(r.status).toBe(409);
    expect(r.body.error.details).toMatchObject({ path: `jobs[${mine}].dedupeKey`, index: mine });
    for (const [n, scope] of scopes.entries()) expect((await jobsIn(scope)).length).toBe(n === mine ? 1 : 0);
    for (const home of homes) expect(await staged(env.SCOPE.getByName(home))).toBe(0);
  });

  it("the decider's answer lost: asked again, it answers with the jobs it made, and every part exists once", async () => {
    const type = uniqueType("batch");
    const { scopes, homes, decider } = threeScopes();
    const r = await batch(failing(decider, "commitDecidingBatch", { lostAnswer: true }), scopes.map((scope, n) => ({ type, payload: { n }, scope })));
    expect(r.status).toBe(200);
    const ids = r.body.results.map((x: { id: string }) => x.id);
    // The decider's part, answered the second time: its job read back as GET reads it, not made again.
    const mine = r.body.results[homes.indexOf(decider)];
    expect(mine.created).toBe(false);
    expect(mine.job).toEqual((await api("GET", `/v1/jobs/${mine.id}`)).body.job);
    const payloads = (await Promise.all(scopes.map(jobsIn))).map((items) => items.map((j) => j.payload.n));
    expect(payloads).toEqual([[0], [1], [2]]);
    for (const [n, scope] of scopes.entries()) expect((await jobsIn(scope))[0]!.id).toBe(ids[n]);
  });

  it("a part's commit answer lost: asked again, the part answers its jobs as they are (read by id), each made once", async () => {
    const type = uniqueType("batch");
    const { scopes, homes, notDecider } = threeScopes();
    const r = await batch(failing(notDecider, "commitBatch", { lostAnswer: true }), scopes.map((scope, n) => ({ type, payload: { n }, scope })));
    expect(r.status).toBe(200);
    const late = homes.indexOf(notDecider);
    // The part that answered the second time: its job is there, as GET reads it, not created by that call.
    const item = r.body.results[late];
    expect(item.created).toBe(false);
    expect(item.job).toEqual((await api("GET", `/v1/jobs/${item.id}`)).body.job);
    expect(item.job.payload).toEqual({ n: late });
    const payloads = (await Promise.all(scopes.map(jobsIn))).map((items) => items.map((j) => j.payload.n));
    expect(payloads).toEqual([[0], [1], [2]]);
  });

  it("a part whose commit cannot be delivered is applied by its object's alarm: every part ends committed, once", async () => {
    const type = uniqueType("batch");
    const { scopes, homes, notDecider } = threeScopes();
    const clock = new ManualClock(Date.now());
    const late = env.SCOPE.getByName(notDecider);
    await useClock(late, clock);
    const r = await batch(failing(notDecider, "commitBatch"), scopes.map((scope, n) => ({ type, payload: { n }, scope })));
    expect(r.status).toBe(500);
    expect(r.body.error.message).toContain("the batch committed");
    expect(await staged(late)).toBe(1);
    clock.advance(STAGE_TIMEOUT_MS + 1);
    await runDurableObjectAlarm(late);
    expect(await staged(late)).toBe(0);
    const payloads = (await Promise.all(scopes.map(jobsIn))).map((items) => items.map((j) => j.payload.n));
    expect(payloads).toEqual([[0], [1], [2]]);
    expect(homes.length).toBe(3);
  });

  it("a coordinator gone after staging: each object's alarm asks the decider, which aborts; a late commit is refused", async () => {
    const type = uniqueType("batch");
    const { homes, decider, notDecider } = threeScopes();
    const clock = new ManualClock(Date.now());
    const stubs = [decider, notDecider].map((h) => env.SCOPE.getByName(h));
    for (const s of stubs) await useClock(s, clock);
    const id = `b-${crypto.randomUUID()}`;
    for (const [k, s] of stubs.entries()) expect(await s.stageBatch(id, decider, [newJob([decider, notDecider][k]!, { type })])).toBeNull();
    // Each stage armed its object's alarm for the timeout: that is what settles it with no coordinator.
    for (const s of stubs) expect(await alarmAt(s, { flush: false })).toBeLessThanOrEqual(clock.now() + STAGE_TIMEOUT_MS);
    clock.advance(STAGE_TIMEOUT_MS + 1);
    for (const s of stubs) await runDurableObjectAlarm(s);
    for (const s of stubs) expect(await staged(s)).toBe(0);
    expect(await stubs[0]!.decideBatch(id, "commit")).toBe("abort");
    for (const s of stubs) expect((await runInDurableObject(s, (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job").one().n))).toBe(0);
    expect(homes).toContain(decider);
  });
});

describe("a batch committed while its coordinator died", () => {
  it("its other parts become visible about a second after the decider's, not at the stage timeout", async () => {
    const type = uniqueType("batch");
    const { decider, notDecider } = threeScopes();
    const clock = new ManualClock(Date.now());
    const [d, p] = [decider, notDecider].map((h) => env.SCOPE.getByName(h));
    for (const s of [d!, p!]) await useClock(s, clock);
    const id = `b-${crypto.randomUUID()}`;
    expect(await p!.stageBatch(id, decider, [newJob(notDecider, { type })])).toBeNull();
    // The decider commits with its own part; the coordinator dies before telling the other part.
    expect((await d!.commitDecidingBatch(id, [newJob(decider, { type })])).decision).toBe("commit");
    expect(await staged(p!)).toBe(1);
    // The stage's alarm is set for its first ask, a second after staging.
    expect(await alarmAt(p!, { flush: false })).toBe(clock.now() + STAGE_ASK_MS);
    clock.advance(STAGE_ASK_MS);
    await runDurableObjectAlarm(p!);
    expect(await staged(p!)).toBe(0);
    const jobs = await runInDurableObject(p!, (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job").one().n);
    expect(jobs).toBe(1);
  });

  it("undecided at the first ask (a slow coordinator), it asks again at doubling intervals and aborts at the timeout", async () => {
    const type = uniqueType("batch");
    const { decider, notDecider } = threeScopes();
    const clock = new ManualClock(Date.now());
    const [d, p] = [decider, notDecider].map((h) => env.SCOPE.getByName(h));
    for (const s of [d!, p!]) await useClock(s, clock);
    const start = clock.now();
    const id = `b-${crypto.randomUUID()}`;
    expect(await p!.stageBatch(id, decider, [newJob(notDecider, { type })])).toBeNull();
    const asks: number[] = [];
    for (let i = 0; i < 8; i++) {
      const at = (await alarmAt(p!, { flush: false }))!;
      if ((await staged(p!)) === 0) break;
      asks.push(at - start);
      clock.set(at);
      await runDurableObjectAlarm(p!);
    }
    expect(asks).toEqual([STAGE_ASK_MS, 3_000, 7_000, 15_000, STAGE_TIMEOUT_MS]);
    expect(await staged(p!)).toBe(0);
    expect(await d!.decideBatch(id, null)).toBe("abort");
  });
});

describe("a stage whose decider cannot be reached", () => {
  it("asks again later, backing off, instead of every alarm pass", async () => {
    const type = uniqueType("batch");
    const { decider, notDecider } = threeScopes();
    const clock = new ManualClock(Date.now());
    const p = env.SCOPE.getByName(notDecider);
    await useClock(p, clock);
    const start = clock.now();
    const id = `b-${crypto.randomUUID()}`;
    expect(await p.stageBatch(id, decider, [newJob(notDecider, { type })])).toBeNull();
    await runInDurableObject(p, (o: ScopeDO) => {
      (partsOf(o).batches as unknown as { deps: { decider: () => unknown } }).deps.decider = () => ({ decideBatch: async () => Promise.reject(new Error("decider down")) });
    });
    const asks: number[] = [];
    for (let i = 0; i < 4; i++) {
      const at = (await alarmAt(p, { flush: false }))!;
      asks.push(at - start);
      clock.set(at);
      await runDurableObjectAlarm(p);
    }
    expect(asks).toEqual([STAGE_ASK_MS, 3_000, 7_000, 15_000]);
    expect(await staged(p)).toBe(1);
  });
});
