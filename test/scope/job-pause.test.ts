/**
 * Pausing one job in its scope object (src/scope/jobs/job-pause.ts; docs/http-api.md "Pause and resume one job"): a
 * pending job waits, paused, holding nothing, and its resume makes it pending at the time it was due; a running one
 * is asked, and pauses where its attempt would go back to pending (a retry, a sleep, the reap pass) — a step's
 * journal answer tells it — or ends as it would; a waiting one stays paused when its waits end; the counts, the
 * claim, the key rules and the refusals see it.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WaitItem } from "../../src/job/handler-contract";
import type { ScopeDO } from "../../src/scope/scope-do";
import { WAIT_FOREVER } from "../../src/scope/jobs/job-pause";
import { freshScope, newJob, row, T0, type ScopeStub } from "../helpers/scope";

const START = { at: T0, seed: "seed" };
const PAUSE = (dueAt: number | null) => ({ kind: "pause", name: "pause", until: null, dueAt });

async function enqueue(stub: ScopeStub, home: string, over: Parameters<typeof newJob>[1] = {}): Promise<string> {
  return runInDurableObject(stub, async (o: ScopeDO) => {
    const out = await o.enqueue([newJob(home, over)]);
    return (out as { ok: true; results: { job: { id: string } }[] }).results[0]!.job.id;
  });
}

async function claim(stub: ScopeStub, type = "test.job"): Promise<{ id: string; token: string }[]> {
  return runInDurableObject(stub, async (o: ScopeDO) => (await o.claim({ worker: "w", types: [type], limit: 10, leaseMs: 30_000 })).map((j) => ({ id: j.id, token: j.leaseToken! })));
}

async function counts(stub: ScopeStub) {
  return (await stub.summary()).types.find((t) => t.type === "test.job");
}

const signalWait = (seq: number, name: string, timeoutMs: number | null = null): WaitItem => ({ seq, kind: "signal", name, timeoutMs, startedAt: T0 });

describe("a pending job paused", () => {
  it("waits, paused, holding nothing and never claimed; its resume makes it pending at the time it was due", async () => {
    const { home, stub, clock } = await freshScope();
    const id = await enqueue(stub, home, { runAt: T0 + 5000 });
    const out = await stub.pause(id);
    expect(out.ok && out.job).toMatchObject({ state: "waiting", runAt: WAIT_FOREVER, waitingFor: [PAUSE(T0 + 5000)] });
    expect(await counts(stub)).toMatchObject({ pending: 0, waiting: 1 });
    // Paused twice is paused once.
    expect((await stub.pause(id)).ok).toBe(true);
    expect(await row(stub, id)).toMatchObject({ state: "waiting", wait: JSON.stringify([PAUSE(T0 + 5000)]) });

    // Past its time, it is still not claimed, and the alarm does not come for it.
    clock!.advance(10_000);
    expect(await claim(stub)).toEqual([]);
    await runDurableObjectAlarm(stub);
    expect((await row(stub, id)).state).toBe("waiting");

    const resumed = await stub.resume(id);
    expect(resumed.ok && resumed.job).toMatchObject({ state: "pending", runAt: T0 + 5000, waitingFor: null });
    expect(await counts(stub)).toMatchObject({ pending: 1, waiting: 0 });
    expect((await claim(stub)).map((c) => c.id)).toEqual([id]);
    const timeline = await runInDurableObject(stub, (o: ScopeDO) => o.timeline(id, 10));
    expect(timeline!.steps.map((s) => [s.state, s.note])).toEqual([
      ["pending", null],
      ["waiting", "paused"],
      ["pending", "resumed"],
      ["running", null],
    ]);
  });

  it("a delayed job resumed before its time stays delayed until then", async () => {
    const { home, stub, clock } = await freshScope();
    const id = await enqueue(stub, home, { runAt: T0 + 60_000 });
    await stub.pause(id);
    clock!.advance(1000);
    expect((await stub.resume(id)).ok).toBe(true);
    expect(await claim(stub)).toEqual([]);
    clock!.advance(59_000);
    expect((await claim(stub)).map((c) => c.id)).toEqual([id]);
  });

  it("can be cancelled; a finished job is not paused, and a job not paused is not resumed", async () => {
    const { home, stub } = await freshScope();
    const id = await enqueue(stub, home);
    await stub.pause(id);
    expect(await stub.cancel(id, "no longer wanted")).toMatchObject({ ok: true, job: { state: "cancelled", waitingFor: null } });
    expect(await stub.pause(id)).toEqual({ ok: false, code: "already_terminal", state: "cancelled" });
    expect(await stub.resume(id)).toMatchObject({ ok: false, code: "conflict", reason: "job is cancelled and not paused" });
    const other = await enqueue(stub, home);
    expect(await stub.resume(other)).toMatchObject({ ok: false, code: "conflict", reason: "job is pending and not paused" });
    expect(await stub.pause("nope")).toEqual({ ok: false, code: "not_found" });
  });

  it("holds its key in active mode; in pending mode, a newer job of its key pending when it resumes carries the request", async () => {
    const { home, stub } = await freshScope();
    const held = await enqueue(stub, home, { dedupeKey: "a" });
    await stub.pause(held);
    const dup = await runInDurableObject(stub, async (o: ScopeDO) => (await o.enqueue([newJob(home, { dedupeKey: "a" })])) as { ok: true; results: { created: boolean; job: { id: string } }[] });
    expect(dup.results[0]).toMatchObject({ created: false, job: { id: held } });

    const id = await enqueue(stub, home, { dedupeKey: "k", keyMode: "pending" });
    await stub.pause(id);
    const second = await runInDurableObject(stub, async (o: ScopeDO) => (await o.enqueue([newJob(home, { dedupeKey: "k", keyMode: "pending" })])) as { ok: true; results: { created: boolean; job: { id: string } }[] });
    const [r] = second.results;
    // `pending` mode: one job of the key may be pending while another is live — here, paused.
    expect(r!.created).toBe(true);
    const out = await stub.resume(id);
    expect(out.ok && out.job).toMatchObject({ state: "superseded", cancelReason: `superseded by ${r!.job.id}` });
    expect((await row(stub, r!.job.id)).state).toBe("pending");
  });
});

describe("a running job asked to pause", () => {
  it("shows the ask; a retry pauses it instead, unspent nothing more, due at its retry time once resumed", async () => {
    const { home, stub, clock } = await freshScope();
    const id = await enqueue(stub, home, { maxAttempts: 5 });
    const [{ token }] = (await claim(stub)) as [{ id: string; token: string }];
    const asked = await stub.pause(id);
    expect(asked.ok && asked.job).toMatchObject({ state: "running", waitingFor: [PAUSE(null)] });
    // A step's journal answer carries the ask (the coordinator and the dispatch port turn it into `paused`).
    const step = await stub.appendStep({ id, op: "commit", seq: 0, name: "a", result: "1", startedAt: T0, start: START }, token);
    expect(step.ok && step.job.waitingFor).toEqual([PAUSE(null)]);

    clock!.advance(100);
    const failed = await stub.fail(id, token, { error: "boom", retryAfterMs: 2000 });
    expect(failed.ok && failed.job).toMatchObject({ state: "waiting", attempts: 1, lastError: "boom", waitingFor: [PAUSE(T0 + 2100)] });
    expect(await row(stub, id)).toMatchObject({ lease_token: null, run_at: WAIT_FOREVER });
    expect(await counts(stub)).toMatchObject({ running: 0, waiting: 1 });
    const timeline = await runInDurableObject(stub, (o: ScopeDO) => o.timeline(id, 10));
    expect(timeline!.steps.at(-1)).toMatchObject({ state: "waiting", note: "paused (boom)" });

    expect((await stub.resume(id)).ok).toBe(true);
    expect(await row(stub, id)).toMatchObject({ state: "pending", run_at: T0 + 2100, wait: null });
  });

  it("that completes ends completed, the ask gone; a withdrawn ask leaves it running", async () => {
    const { home, stub } = await freshScope();
    const a = await enqueue(stub, home);
    const b = await enqueue(stub, home);
    const leases = new Map((await claim(stub)).map((c) => [c.id, c.token]));
    await stub.pause(a);
    await stub.pause(b);
    expect(await stub.complete(a, leases.get(a)!, null)).toMatchObject({ ok: true, job: { state: "completed", waitingFor: null } });
    expect((await row(stub, a)).wait).toBeNull();
    const withdrawn = await stub.resume(b);
    expect(withdrawn.ok && withdrawn.job).toMatchObject({ state: "running", waitingFor: null });
    const failed = await stub.fail(b, leases.get(b)!, { error: "again", retryAfterMs: 0 });
    expect(failed.ok && failed.job.state).toBe("pending");
  });

  it("that sleeps pauses, and resumed sleeps on to its wake time", async () => {
    const { home, stub } = await freshScope();
    const id = await enqueue(stub, home);
    const [{ token }] = (await claim(stub)) as [{ id: string; token: string }];
    await stub.pause(id);
    const out = await stub.sleep(id, token, { name: "nap", seq: 0, until: T0 + 30_000, durationMs: 30_000, startedAt: T0, start: START });
    expect(out.ok && out.job).toMatchObject({ state: "waiting", attempts: 0, waitingFor: [PAUSE(T0 + 30_000)] });
    await stub.resume(id);
    expect(await row(stub, id)).toMatchObject({ state: "pending", run_at: T0 + 30_000 });
  });

  it("whose lease runs out pauses at the reap pass", async () => {
    const { home, stub, clock } = await freshScope();
    const id = await enqueue(stub, home, { maxAttempts: 3 });
    await claim(stub);
    await stub.pause(id);
    clock!.advance(31_000);
    await runDurableObjectAlarm(stub);
    expect(await row(stub, id)).toMatchObject({ state: "waiting", attempts: 1, lease_token: null });
    expect(JSON.parse((await row(stub, id)).wait!)).toEqual([expect.objectContaining({ kind: "pause" })]);
  });

  it("that waits keeps the pause among its waits", async () => {
    const { home, stub } = await freshScope();
    const id = await enqueue(stub, home);
    const [{ token }] = (await claim(stub)) as [{ id: string; token: string }];
    await stub.pause(id);
    const out = await stub.wait(id, token, { waits: [signalWait(0, "approve")], start: START });
    expect(out.ok && out.job).toMatchObject({ state: "waiting", waitingFor: [{ kind: "signal", name: "approve", until: null }, PAUSE(null)] });
  });
});

describe("a waiting job paused", () => {
  it("stays paused when its wait ends, due when resumed", async () => {
    const { home, stub, clock } = await freshScope();
    const id = await enqueue(stub, home);
    const [{ token }] = (await claim(stub)) as [{ id: string; token: string }];
    await stub.wait(id, token, { waits: [signalWait(0, "approve", 60_000)], start: START });
    const asked = await stub.pause(id);
    expect(asked.ok && asked.job).toMatchObject({ state: "waiting", runAt: T0 + 60_000, waitingFor: [{ kind: "signal", name: "approve" }, PAUSE(null)] });

    clock!.advance(1000);
    expect(await stub.signal(id, "approve", '"yes"')).toMatchObject({ ok: true, resumed: true, waitingFor: [PAUSE(T0 + 1000)] });
    expect(await row(stub, id)).toMatchObject({ state: "waiting", run_at: WAIT_FOREVER });
    expect(await claim(stub)).toEqual([]);
    clock!.advance(1000);
    await stub.resume(id);
    expect(await row(stub, id)).toMatchObject({ state: "pending", run_at: T0 + 1000, wait: null });
  });

  it("resumed before its wait ends goes on waiting for it alone; a timeout while paused keeps it paused", async () => {
    const { home, stub, clock } = await freshScope();
    const id = await enqueue(stub, home);
    const [{ token }] = (await claim(stub)) as [{ id: string; token: string }];
    await stub.wait(id, token, { waits: [signalWait(0, "approve", 5000)], start: START });
    await stub.pause(id);
    const out = await stub.resume(id);
    expect(out.ok && out.job).toMatchObject({ state: "waiting", runAt: T0 + 5000, waitingFor: [{ kind: "signal", name: "approve", until: T0 + 5000 }] });

    await stub.pause(id);
    clock!.advance(5000);
    await runDurableObjectAlarm(stub);
    expect(await row(stub, id)).toMatchObject({ state: "waiting", run_at: WAIT_FOREVER, wait: JSON.stringify([PAUSE(T0 + 5000)]) });
  });
});
