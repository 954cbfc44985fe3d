/**
 * The outbox between scope objects (src/scope/workflow/outbox.ts; docs/design.md "The outbox"): what one object owes
 * another reaches it however the first sends fail — the row stays, backs off, and the alarm sends it again, also
 * from a new instance after a restart — and is applied once however often it arrives. Shown with a parent's
 * child: its enqueue owed by the parent's object, its end owed by the child's.
 */
import { scopeRpc } from "../helpers/scope";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock";
import type { WaitItem } from "../../src/job/handler-contract";
import { scopeHome } from "../../src/job/home";
import type { OutboxDeps, OwedItem } from "../../src/scope/workflow/outbox";
import type { ScopeDO } from "../../src/scope/scope-do";
import { uniqueType } from "../helpers/api";
import { env, freshScope, newJob, partsOf, restartCold, row, T0, useClock, type ScopeStub } from "../helpers/scope";

const START = { at: T0, seed: "seed" };

type OutboxRow = { kind: string; tries: number; next_at: number };
const outbox = (stub: ScopeStub) => runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<OutboxRow>("SELECT kind, tries, next_at FROM outbox ORDER BY seq").toArray());

/** failSends: the object's next `n` sends fail as an unreachable receiver's do; what they carried is recorded. */
async function failSends(stub: ScopeStub, n: number, carried: OwedItem[][] = []): Promise<OwedItem[][]> {
  await runInDurableObject(stub, (o: ScopeDO) => {
    const deps = (partsOf(o).workflow.outbox as unknown as { d: OutboxDeps }).d;
    const real = deps.deliver;
    let left = n;
    deps.deliver = async (home, items) => {
      carried.push(items);
      if (left-- > 0) throw new Error("injected: the receiver is unreachable");
      return real(home, items);
    };
  });
  return carried;
}

/** parentOfAKid: a leased job in a fresh scope (on a manual clock, as is the scope its child will live in); `invoke` ends its attempt on one child. */
async function parentOfAKid() {
  const clock = new ManualClock(T0);
  const { home, stub } = await freshScope(clock);
  const kids = { type: "Kids", id: crypto.randomUUID() };
  const kidHome = env.SCOPE.getByName(scopeHome(kids).name);
  await useClock(kidHome, clock);
  const kidType = uniqueType("test.kid");
  const parent = await runInDurableObject(stub, async (o: ScopeDO) => {
    await o.enqueue([newJob(home)]);
    const [held] = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
    return { id: held!.id, token: held!.leaseToken };
  });
  const item: WaitItem = { seq: 0, kind: "invoke", name: "kid", startedAt: T0, request: { type: kidType, payload: {}, scope: kids } };
  const invoke = () => stub.wait(parent.id, parent.token, { waits: [item], start: START });
  return { clock, stub, kidHome, kidType, parent, invoke };
}

describe("the outbox", () => {
  it("keeps a child's enqueue through failed sends, backing off, and sends it again by the alarm", async () => {
    const { clock, stub, kidHome, kidType, parent: id, invoke } = await parentOfAKid();
    const carried = await failSends(stub, 2);
    await invoke();
    await vi.waitFor(async () => expect(await outbox(stub)).toEqual([{ kind: "enqueue", tries: 1, next_at: T0 + 1000 }]));
    expect(carried).toHaveLength(1);

    clock.advance(1000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await outbox(stub)).toEqual([{ kind: "enqueue", tries: 2, next_at: T0 + 1000 + 2000 }]);
    clock.advance(2000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await outbox(stub)).toEqual([]);
    expect(carried).toHaveLength(3);
    // The same enqueue arriving again (a send whose answer was lost) makes no second child.
    expect(await kidHome.deliver(carried[2]!)).toEqual([true]);
    const kidsMade = await runInDurableObject(kidHome, (_o: ScopeDO, state) => state.storage.sql.exec<{ id: string; parent_id: string }>(`SELECT id, parent_id FROM job WHERE type = '${kidType}'`).toArray());
    expect(kidsMade).toEqual([{ id: expect.any(String), parent_id: id.id }]);
    expect((await row(stub, id.id)).state).toBe("waiting");
  });

  it("keeps a child's end through a failed send and its object's restart; the parent hears of it once", async () => {
    const made = await parentOfAKid();
    const { clock, stub, kidType, parent } = made;
    let kidHome = made.kidHome;
    await made.invoke();
    await vi.waitFor(async () => expect(await outbox(stub)).toEqual([]));

    // The child runs and completes; its end's first send fails.
    const carried = await failSends(kidHome, 1);
    const [kid] = await runInDurableObject(kidHome, (o: ScopeDO) => o.claim({ worker: "w", types: [kidType], limit: 1, leaseMs: 30_000 }));
    expect(await kidHome.complete(kid!.id, kid!.leaseToken, JSON.stringify({ done: 1 }))).toMatchObject({ ok: true });
    await vi.waitFor(async () => expect(await outbox(kidHome)).toEqual([{ kind: "child_ended", tries: 1, next_at: T0 + 1000 }]));
    expect((await row(stub, parent.id)).state).toBe("waiting");

    // The child's object restarts (a deploy, an eviction): the new instance's alarm sends the end.
    kidHome = await restartCold(env.SCOPE, kidHome);
    await useClock(kidHome, clock);
    clock.advance(1000);
    expect(await runDurableObjectAlarm(kidHome)).toBe(true);
    expect(await outbox(kidHome)).toEqual([]);
    expect(await row(stub, parent.id)).toMatchObject({ state: "pending", wait: null });
    const journal = (await scopeRpc(stub).steps(parent.id))!;
    expect(journal[0]).toMatchObject({ kind: "invoke", result: { child: kid!.id, state: "completed", result: { done: 1 } } });
    const timeline = async () => (await runInDurableObject(stub, (o: ScopeDO) => o.timeline(parent.id, 20)))!.steps.length;
    const steps = await timeline();
    // Told again (the first send had in fact landed, its answer lost): nothing changes.
    expect(await stub.deliver(carried[0]!)).toEqual([true]);
    expect(await timeline()).toBe(steps);
    expect((await scopeRpc(stub).steps(parent.id))![0]).toEqual(journal[0]);
  });
});
