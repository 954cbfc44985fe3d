/**
 * Child jobs between scope objects (src/scope/workflow/invokes.ts, outbox.ts; docs/workflows.md "Child jobs"): a wait of
 * 1,000 invokes journals them in one transaction and owes their enqueue in a row or two of the outbox; the children's home
 * takes them with their parent; their ends come back through its outbox and resume the parent once, every entry
 * ended in call order. Requests are checked as an enqueue is, each shape once: a refused field is named, and two
 * requests whose fields JSON cannot tell apart are still told apart.
 */
import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { WaitItem } from "../../src/job/handler-contract";
import { homeOfJobId, scopeHome } from "../../src/job/home";
import { JSON_PARAM_MAX_BYTES } from "../../src/scope/jobs/json-chunks";
import type { ScopeDO } from "../../src/scope/scope-do";
import { uniqueType } from "../helpers/api";
import { env, freshScope, newJob, row, T0, type ScopeStub } from "../helpers/scope";

const START = { at: T0, seed: "seed" };

async function leaseOne(stub: ScopeStub, home: string) {
  return runInDurableObject(stub, async (o: ScopeDO) => {
    await o.enqueue([newJob(home)]);
    const [held] = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
    return { id: held!.id, token: held!.leaseToken };
  });
}

const invoke = (seq: number, request: unknown): WaitItem => ({ seq, kind: "invoke", name: `item-${seq}`, startedAt: T0, request });

const count = (stub: ScopeStub, sql: string) => runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ n: number }>(sql).one().n);

const childrenOpen = (stub: ScopeStub, id: string) =>
  runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ n: number }>("SELECT children_open AS n FROM job WHERE id = ?", id).one().n);

describe("a fan-out of 1,000 children", () => {
  it("is owed in a row or two, enqueued with its parent, and resumes the parent once every child ended", async () => {
    const { home, stub } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    const kidType = uniqueType("test.kid");
    const kids = { type: "Kids", id: crypto.randomUUID() };
    const waits = Array.from({ length: 1000 }, (_, i) => invoke(i, { type: kidType, payload: { i }, scope: kids }));
    const owedRows = await runInDurableObject(stub, async (o: ScopeDO, state) => {
      const out = await o.wait(id, token, { waits, start: START });
      expect(out.ok && out.job).toMatchObject({ state: "waiting", attempts: 0 });
      // Read before the send (started after the commit) has its answer: what the wait owed.
      return state.storage.sql.exec<{ kind: string; n: number; jobs: number }>("SELECT kind, count(*) AS n, sum(json_array_length(body)) AS jobs FROM outbox GROUP BY kind").toArray();
    });
    // A row or two (each under a SQLite string's documented size), not one per child.
    expect(owedRows).toEqual([{ kind: "enqueue", n: expect.any(Number), jobs: 1000 }]);
    expect(owedRows[0]!.n).toBeLessThanOrEqual(2);
    // Waiting holds no lease, and counts its open children.
    expect(await row(stub, id)).toMatchObject({ state: "waiting", lease_token: null, lease_expires_at: null });
    expect(await childrenOpen(stub, id)).toBe(1000);

    const kidHome = env.SCOPE.getByName(scopeHome(kids).name);
    await vi.waitFor(async () => expect(await count(kidHome, `SELECT count(*) AS n FROM job WHERE type = '${kidType}'`)).toBe(1000), { timeout: 10_000 });
    expect(await count(kidHome, `SELECT count(*) AS n FROM job WHERE type = '${kidType}' AND parent_id = '${id}' AND parent_step = 'item-' || parent_seq`)).toBe(1000);
    await vi.waitFor(async () => expect(await count(stub, "SELECT count(*) AS n FROM outbox")).toBe(0));

    // The children run (pulled here) and complete in two deliveries' worth; the parent hears of each once.
    for (let round = 0; round < 2; round++) {
      const held = await scopeRpc(kidHome).claim({ worker: "w", types: [kidType], limit: 500, leaseMs: 30_000 });
      expect(held).toHaveLength(500);
      const items = held.map((h) => ({ id: h.id, token: h.leaseToken, result: JSON.stringify({ twice: (h.payload as { i: number }).i * 2 }) }));
      const out: { ok: boolean }[] = await runInDurableObject(kidHome, (o: ScopeDO) => o.completeMany(items));
      expect(out.every((o) => o.ok)).toBe(true);
      if (round === 0) {
        await vi.waitFor(async () => expect((await childrenOpen(stub, id))).toBe(500), { timeout: 10_000 });
        expect((await row(stub, id)).state).toBe("waiting");
      }
    }
    await vi.waitFor(async () => expect((await row(stub, id)).state).toBe("pending"), { timeout: 10_000 });
    expect(await childrenOpen(stub, id)).toBe(0);
    expect(await row(stub, id)).toMatchObject({ wait: null });
    const journal = (await scopeRpc(stub).steps(id))!;
    expect(journal).toHaveLength(1000);
    journal.forEach((e, i) => expect(e).toMatchObject({ seq: i, kind: "invoke", name: `item-${i}`, result: { state: "completed", result: { twice: i * 2 } } }));
    expect(new Set(journal.map((e) => homeOfJobId((e.result as { child: string }).child)?.name))).toEqual(new Set([scopeHome(kids).name]));
    const timeline = await runInDurableObject(stub, (o: ScopeDO) => o.timeline(id, 10));
    expect(timeline!.steps.filter((s) => s.state === "pending")).toHaveLength(2); // enqueued, and resumed once
    await vi.waitFor(async () => expect(await count(kidHome, "SELECT count(*) AS n FROM outbox")).toBe(0));
  }, 30_000);
});

describe("a fan-out of large children", () => {
  it("is owed in rows that each stay within a SQLite string's documented size, whatever part of the child is large", async () => {
    const { home, stub } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    const tags = Array.from({ length: 20 }, (_, t) => `${t}`.padEnd(100, "t"));
    const kidType = uniqueType("test.kid");
    const waits = Array.from({ length: 1000 }, (_, i) => invoke(i, { type: kidType, payload: { i }, tags }));
    const bodies = await runInDurableObject(stub, async (o: ScopeDO, state) => {
      await o.wait(id, token, { waits, start: START });
      return state.storage.sql.exec<{ n: number; jobs: number }>("SELECT length(body) AS n, json_array_length(body) AS jobs FROM outbox ORDER BY seq").toArray();
    });
    expect(bodies.length).toBeGreaterThan(1);
    expect(bodies.reduce((n, b) => n + b.jobs, 0)).toBe(1000);
    for (const b of bodies) expect(b.n).toBeLessThanOrEqual(JSON_PARAM_MAX_BYTES + 1000);
  });
});

describe("an invoke's request", () => {
  it("is refused naming its field, even when its shape's JSON matches an accepted one's", async () => {
    const kidType = uniqueType("test.kid");
    const cases: [unknown[], string][] = [
      // Infinity is an accepted maxAttempts (unlimited); null is not, and JSON writes both as null.
      [[{ type: kidType, payload: {}, maxAttempts: Infinity }, { type: kidType, payload: {}, maxAttempts: null }], "request.maxAttempts"],
      [[{ type: kidType, payload: { a: 1 } }, { type: kidType, payload: [1] }], "request.payload"],
      [[{ type: kidType, payload: {} }, { type: kidType, payload: {}, priority: 1.5 }], "request.priority"],
      [[{ type: kidType, payload: {} }, { type: kidType, payload: {}, delayMs: 10, runAt: T0 }], "request.delayMs"],
      [[{ type: kidType, payload: {} }, "not a request"], "request"],
      // JSON would drop the key set to undefined, and write NaN as null; the strict schema refuses both.
      [[{ type: kidType, payload: {} }, { type: kidType, payload: {}, extra: undefined }], "request"],
      [[{ type: kidType, payload: {}, dedupeKey: "\u0000NaN" }, { type: kidType, payload: {}, dedupeKey: NaN }], "request.dedupeKey"],
    ];
    for (const [requests, field] of cases) {
      const { home, stub } = await freshScope();
      const { id, token } = await leaseOne(stub, home);
      const out = await stub.wait(id, token, { waits: requests.map((r, i) => invoke(i, r)), start: START });
      expect(out.ok && out.job, JSON.stringify(requests)).toMatchObject({ state: "failed", failureKind: "fatal", lastError: expect.stringContaining(`ctx.invoke("item-1"): ${field}`) });
      // Nothing owed: the wait's transaction failed the job and journaled no child.
      expect(await count(stub, "SELECT count(*) AS n FROM outbox")).toBe(0);
      expect(await count(stub, "SELECT count(*) AS n FROM job_step")).toBe(0);
    }
  });
});
