/**
 * Waits in one scope object (src/scope/workflow/waits.ts; docs/workflows.md): an attempt that ends on a wait puts its job in
 * `waiting` holding no lease or attempt; a signal ends the wait and makes it due; one that raced ahead is kept and
 * taken by the wait; a timeout ends it with null at the alarm; a wait token is signed, completed once and refused
 * once expired; cancel ends a waiting job; the counts and the key rules see it.
 */
import { scopeRpc } from "../helpers/scope";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { WaitItem } from "../../src/job/handler-contract";
import { parseToken } from "../../src/job/wait-token";
import type { ScopeDO } from "../../src/scope/scope-do";
import { alarmAt, env, freshScope, newJob, restartCold, row, rows, T0, useClock, type ScopeStub } from "../helpers/scope";

const START = { at: T0, seed: "seed" };

/** leaseOne: enqueue one job and claim it as a pull worker would; its id and lease token. */
async function leaseOne(stub: ScopeStub, home: string, over: Parameters<typeof newJob>[1] = {}) {
  return runInDurableObject(stub, async (o: ScopeDO) => {
    await o.enqueue([newJob(home, over)]);
    const [held] = await o.claim({ worker: "w", types: [over.type ?? "test.job"], limit: 1, leaseMs: 30_000 });
    return { id: held!.id, token: held!.leaseToken };
  });
}

const signalWait = (seq: number, name: string, timeoutMs: number | null = null): WaitItem => ({ seq, kind: "signal", name, timeoutMs, startedAt: T0 });

async function kept(stub: ScopeStub): Promise<number> {
  return runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job_signal").one().n);
}

async function journal(stub: ScopeStub, id: string) {
  return (await scopeRpc(stub).steps(id))!;
}

describe("a wait", () => {
  it("puts the job in waiting with no lease and its attempt given back; a signal ends it and makes the job due", async () => {
    const { home, stub, clock } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    const out = await stub.wait(id, token, { waits: [signalWait(0, "approve", 60_000)], start: START });
    expect(out.ok && out.job).toMatchObject({ state: "waiting", attempts: 0, waitingFor: [{ kind: "signal", name: "approve", until: T0 + 60_000 }], runAt: T0 + 60_000 });
    const r = await row(stub, id);
    expect(r).toMatchObject({ state: "waiting", lease_token: null, lease_expires_at: null, run_at: T0 + 60_000 });
    // Counted as waiting, and the alarm is its timeout.
    expect((await stub.summary()).types.find((t) => t.type === "test.job")).toMatchObject({ waiting: 1, pending: 0, running: 0 });
    expect(await alarmAt(stub)).toBe(T0 + 60_000);
    // A late write of the attempt that waited is refused: its lease is gone.
    expect(await stub.complete(id, token, null)).toMatchObject({ ok: false, code: "lease_lost" });

    clock!.advance(500);
    expect(await stub.signal(id, "approve", JSON.stringify({ by: "ann" }))).toEqual({ ok: true, id, resumed: true, waitingFor: null });
    expect(await row(stub, id)).toMatchObject({ state: "pending", wait: null, run_at: T0 + 500 });
    expect(await journal(stub, id)).toEqual([expect.objectContaining({ seq: 0, name: "approve", kind: "signal", result: { data: { by: "ann" } }, finishedAt: T0 + 500, wakeAt: T0 + 60_000 })]);
    const timeline = await runInDurableObject(stub, (o: ScopeDO) => o.timeline(id, 10));
    expect(timeline!.steps.map((s) => [s.state, s.note])).toEqual([
      ["pending", null],
      ["running", null],
      ["waiting", `waiting for signal "approve" until ${new Date(T0 + 60_000).toISOString()}`],
      ["pending", 'signal "approve" arrived'],
    ]);
  });

  it("takes a signal that was sent before it (kept for it), and goes on at once", async () => {
    const { home, stub } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    // Sent while the job runs, before its handler reached the wait.
    expect(await stub.signal(id, "approve", '"early"')).toEqual({ ok: true, id, resumed: false, waitingFor: null });
    expect(await kept(stub)).toBe(1);
    const out = await stub.wait(id, token, { waits: [signalWait(0, "approve")], start: START });
    expect(out.ok && out.job).toMatchObject({ state: "pending", runAt: T0, waitingFor: null });
    expect(await kept(stub)).toBe(0);
    expect((await journal(stub, id))[0]).toMatchObject({ kind: "signal", result: { data: "early" } });
  });

  it("ends with null at its timeout, by the alarm", async () => {
    const { home, stub, clock } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    await stub.wait(id, token, { waits: [signalWait(0, "approve", 1000)], start: START });
    clock!.advance(1000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await row(stub, id)).toMatchObject({ state: "pending", wait: null, run_at: T0 + 1000 });
    expect((await journal(stub, id))[0]).toMatchObject({ result: null, finishedAt: T0 + 1000 });
    // A signal after the wait ended is kept for a wait to come, not taken by the ended one.
    expect(await stub.signal(id, "approve", "1")).toMatchObject({ ok: true, resumed: false });
  });

  it("held open across a replay keeps its timeout, and a finished one makes the job due at once", async () => {
    const { home, stub, clock } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    await stub.wait(id, token, { waits: [signalWait(0, "a", 5000), signalWait(1, "b")], start: START });
    expect(await row(stub, id)).toMatchObject({ state: "waiting", run_at: T0 + 5000 });
    // Signal a ends its wait; the replay finds a done and b still open: it waits on b, keeping b's (no) timeout.
    await stub.signal(id, "a", "1");
    const again = await runInDurableObject(stub, async (o: ScopeDO) => (await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 }))[0]!);
    clock!.advance(10);
    const out = await stub.wait(id, again.leaseToken, { waits: [{ ...signalWait(1, "b"), held: true }], start: START });
    expect(out.ok && out.job).toMatchObject({ state: "waiting", waitingFor: [{ kind: "signal", name: "b", until: null }] });
    // No timeout left: the job's run_at is the far end of time, and the alarm is not set for it.
    expect((await row(stub, id)).run_at).toBe(8_640_000_000_000_000);
    expect(await alarmAt(stub)).not.toBe(8_640_000_000_000_000);
  });

  it("a wait journaled where the journal has another step is nondeterminism: the job fails, counted in its error group", async () => {
    const { home, stub } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    await stub.appendStep({ id, op: "commit", seq: 0, name: "charge", result: "1", startedAt: T0, start: START }, token);
    const out = await stub.wait(id, token, { waits: [signalWait(0, "approve")], start: START, version: "v3" });
    expect(out.ok && out.job).toMatchObject({ state: "failed", failureKind: "nondeterminism", codeVersion: "v3" });
    expect(out.ok && out.job.lastError).toMatch(/NondeterminismError/);
    // A refused wait is an error the attempt ended in, as a thrown one is (scope/errors/).
    const groups = await stub.errorGroups(null);
    expect(groups.map((g) => [g.kind, g.total, g.lastJobId])).toEqual([["nondeterminism", 1, id]]);
  });
});

describe("signals", () => {
  it("refuse a finished job (already_terminal), an unknown one (not_found), and past the cap of kept ones (conflict)", async () => {
    const { home, stub } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    for (let i = 0; i < 100; i++) expect(await stub.signal(id, `s${i}`, "null")).toMatchObject({ ok: true, resumed: false });
    expect(await stub.signal(id, "one-more", "null")).toMatchObject({ ok: false, code: "conflict" });
    await stub.complete(id, token, null);
    expect(await stub.signal(id, "approve", "null")).toMatchObject({ ok: false, code: "already_terminal", state: "completed" });
    expect(await stub.signal(`${home.length}.nope`, "approve", "null")).toMatchObject({ ok: false, code: "not_found" });
  });

  it("kept ones are dropped once past signals.retainMs (the sweep)", async () => {
    const { home, stub, clock } = await freshScope();
    const { id } = await leaseOne(stub, home);
    await stub.signal(id, "approve", "null");
    expect(await alarmAt(stub)).toBeLessThanOrEqual(T0 + 86_400_000);
    clock!.advance(86_400_000);
    await runDurableObjectAlarm(stub);
    expect(await kept(stub)).toBe(0);
  });

  it("to a key: the live job of the type holding it, a waiting one first", async () => {
    const { home, stub } = await freshScope();
    const { id, token } = await leaseOne(stub, home, { dedupeKey: "order-1", keyMode: "pending" });
    await stub.wait(id, token, { waits: [signalWait(0, "paid")], start: START });
    // A follower of the key waits behind the waiting job: it is not claimed.
    await runInDurableObject(stub, (o: ScopeDO) => o.enqueue([newJob(home, { dedupeKey: "order-1", keyMode: "pending" })]));
    expect(await runInDurableObject(stub, (o: ScopeDO) => o.claim({ worker: "w", types: ["test.job"], limit: 5, leaseMs: 30_000 }))).toEqual([]);
    expect(await stub.signalKey("test.job", "order-1", "paid", "true")).toEqual({ ok: true, id, resumed: true, waitingFor: null });
    expect(await stub.signalKey("other.type", "order-1", "paid", "true")).toMatchObject({ ok: false, code: "not_found" });
  });
});

describe("cancel", () => {
  it("ends a waiting job; a signal after it is refused", async () => {
    const { home, stub } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    await stub.wait(id, token, { waits: [signalWait(0, "approve")], start: START });
    expect(await stub.cancel(id, "no longer needed")).toMatchObject({ ok: true, job: { state: "cancelled", waitingFor: null } });
    expect(await stub.signal(id, "approve", "null")).toMatchObject({ ok: false, code: "already_terminal" });
    expect((await rows(stub)).filter((r) => r.state === "waiting")).toEqual([]);
  });
});

describe("wait tokens", () => {
  it("are signed by the object, completed once, and refused forged or once expired", async () => {
    const { home, stub, clock } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    const made = await stub.appendStep({ id, op: "token", seq: 0, name: "ok", result: JSON.stringify({ timeoutMs: 60_000 }), startedAt: T0, start: START }, token);
    expect(made.ok).toBe(true);
    const t = JSON.parse((made as { result: string }).result) as { id: string; path: string; expiresAt: number; url: string | null };
    expect(t).toMatchObject({ path: `/v1/tokens/${t.id}`, expiresAt: T0 + 60_000, url: null });
    expect(parseToken(t.id)).toMatchObject({ jobId: id, name: "ok", expiresAt: T0 + 60_000 });
    // The same write sent again answers the token journaled first.
    clock!.advance(5);
    const twice = await stub.appendStep({ id, op: "token", seq: 0, name: "ok", result: JSON.stringify({ timeoutMs: 60_000 }), startedAt: T0, start: START }, token);
    expect(JSON.parse((twice as { result: string }).result)).toEqual(t);

    await stub.wait(id, token, { waits: [{ seq: 1, kind: "token_wait", name: "ok", until: t.expiresAt, startedAt: T0 }], start: START });
    expect((await row(stub, id)).run_at).toBe(T0 + 60_000);
    // A forged signature (one character changed) is no token at all.
    const forged = t.id.slice(0, -1) + (t.id.endsWith("A") ? "B" : "A");
    expect(await stub.completeToken(forged, "null")).toEqual({ ok: false, code: "not_found" });
    expect(await stub.completeToken(t.id, '{"ok":true}')).toEqual({ ok: true, id, resumed: true, waitingFor: null });
    expect(await stub.completeToken(t.id, "null")).toMatchObject({ ok: false, code: "conflict" });
    expect((await journal(stub, id))[1]).toMatchObject({ kind: "token_wait", name: "ok", result: { data: { ok: true } } });

    clock!.advance(60_000);
    expect(await stub.completeToken(t.id, "null")).toMatchObject({ ok: false, code: "gone" });
  });

  it("one per name; a completion sent before the wait is kept until the token expires, past signals.retainMs", async () => {
    const { home, stub, clock } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    const make = (seq: number) => stub.appendStep({ id, op: "token", seq, name: "ok", result: JSON.stringify({ timeoutMs: 3 * 86_400_000 }), startedAt: T0, start: START }, token);
    const made = await make(0);
    expect(await make(1)).toMatchObject({ ok: false, code: "refused", reason: expect.stringContaining("one token per name") });
    const t = JSON.parse((made as { result: string }).result) as { id: string };
    // The token of a job that is not this one (another id) is no token here.
    expect(await stub.completeToken(t.id.replace(/^[^.]+/, "eA"), "null")).toEqual({ ok: false, code: "not_found" });
    expect(await stub.completeToken(t.id, "7")).toEqual({ ok: true, id, resumed: false, waitingFor: null });
    clock!.advance(2 * 86_400_000);
    await runDurableObjectAlarm(stub);
    expect(await kept(stub)).toBe(1);
    // The attempt's lease lapsed meanwhile (the alarm reaped it): the next attempt, after its backoff, reaches the wait.
    clock!.advance(3_600_000);
    const again = await runInDurableObject(stub, async (o: ScopeDO) => (await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 }))[0]!);
    const out = await stub.wait(id, again.leaseToken, { waits: [{ seq: 1, kind: "token_wait", name: "ok", until: T0 + 3 * 86_400_000, startedAt: T0 }], start: START });
    expect(out.ok && out.job).toMatchObject({ state: "pending" });
    expect((await journal(stub, id))[1]).toMatchObject({ result: { data: 7 } });
  });
});

describe("a crash around a wait", () => {
  it("before it reached the queue (the attempt died, its lease lapsed): a signal sent meanwhile is kept, and the next attempt's wait takes it", async () => {
    const { home, stub, clock } = await freshScope();
    const { id } = await leaseOne(stub, home);
    // The signal arrives while the attempt runs; the attempt dies before its wait is written.
    expect(await stub.signal(id, "approve", '"early"')).toEqual({ ok: true, id, resumed: false, waitingFor: null });
    clock!.advance(30_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await row(stub, id)).toMatchObject({ state: "pending", attempts: 1, lease_token: null });
    expect(await journal(stub, id)).toEqual([]);
    clock!.advance(3_600_000);
    const again = await runInDurableObject(stub, async (o: ScopeDO) => (await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 }))[0]!);
    const out = await stub.wait(id, again.leaseToken, { waits: [signalWait(0, "approve", 60_000)], start: START });
    expect(out.ok && out.job).toMatchObject({ state: "pending", attempts: 1 });
    expect((await journal(stub, id))[0]).toMatchObject({ kind: "signal", result: { data: "early" } });
    expect(await kept(stub)).toBe(0);
  });

  it.each(["signal", "token_wait", "event"] as const)("after it reached the queue (%s): the object's restart keeps the job waiting, its timeout armed, and what it waits for ends it", async (kind) => {
    const { home, stub, clock } = await freshScope();
    const { id, token } = await leaseOne(stub, home);
    const topic = "order.paid";
    let made: { id: string } | null = null;
    if (kind === "token_wait") {
      const t = await stub.appendStep({ id, op: "token", seq: 0, name: "go", result: JSON.stringify({ timeoutMs: 60_000 }), startedAt: T0, start: START }, token);
      made = JSON.parse((t as { result: string }).result) as { id: string };
    }
    const seq = kind === "token_wait" ? 1 : 0;
    const w: WaitItem =
      kind === "signal"
        ? signalWait(0, "go", 60_000)
        : kind === "token_wait"
          ? { seq, kind, name: "go", until: T0 + 60_000, startedAt: T0 }
          : { seq, kind, name: topic, match: { n: 1 }, timeoutMs: 60_000, startedAt: T0 };
    expect(await stub.wait(id, token, { waits: [w], start: START })).toMatchObject({ ok: true, job: { state: "waiting" } });
    // An event wait's registration goes to its topic's registry after the commit (its outbox row, retried at +5 s
    // while undelivered): restarted before it landed, the object's alarm is that retry's, not the timeout's.
    const owed = () => runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n);
    await vi.waitFor(async () => expect(await owed()).toBe(0), { timeout: 5_000, interval: 10 });

    const cold = await restartCold(env.SCOPE, stub);
    await useClock(cold, clock!);
    expect(await row(cold, id)).toMatchObject({ state: "waiting", run_at: T0 + 60_000 });
    expect(await alarmAt(cold)).toBe(T0 + 60_000);
    clock!.advance(100);
    if (kind === "signal") expect(await cold.signal(id, "go", '"after"')).toMatchObject({ ok: true, resumed: true });
    else if (kind === "token_wait") expect(await cold.completeToken(made!.id, '"after"')).toMatchObject({ ok: true, resumed: true });
    else expect(await cold.deliver([{ kind: "event_arrived", target: id, body: JSON.stringify({ seq, event: { id: "e1", topic, payload: { n: 1 }, at: T0 + 100 } }) }])).toEqual([true]);
    expect(await row(cold, id)).toMatchObject({ state: "pending", wait: null, run_at: T0 + 100 });
  });
});
