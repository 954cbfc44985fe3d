/**
 * Keys over time: dedupe modes, coalescing, debounce and throttle, in one
 * scope object with an injected clock.
 */
import { scopeRpc } from "../helpers/scope";
import { describe, expect, it } from "vitest";
import type { KeyMode } from "../../src/job/key-mode";
import { alarmAt, freshScope, newJob, put, row, rows, T0 } from "../helpers/scope";

const lease = { worker: "w", types: null, limit: 1, leaseMs: 30_000 };
const keyed = (home: string, mode: KeyMode, payload: object, extra = {}) =>
  newJob(home, { dedupeKey: "k", keyMode: mode, payload: JSON.stringify(payload), ...extra });

describe("dedupe modes", () => {
  it("active: one pending-or-running job per key; a duplicate gets it", async () => {
    const { home, stub } = await freshScope();
    const [a] = await put(stub, [keyed(home, "active", { n: 1 })]);
    await scopeRpc(stub).claim(lease);
    const [b] = await put(stub, [keyed(home, "active", { n: 2 })]);
    expect(b).toMatchObject({ created: false, row: { id: a!.row.id, state: "running" } });
  });

  it("pending: one follower waits behind the running job, and starts only after it", async () => {
    const { home, stub } = await freshScope();
    const [a] = await put(stub, [keyed(home, "pending", { n: 1 })]);
    const [running] = await scopeRpc(stub).claim(lease);
    const [f] = await put(stub, [keyed(home, "pending", { n: 2 })]);
    expect(f!.created).toBe(true);
    const [g] = await put(stub, [keyed(home, "pending", { n: 3 })]);
    expect(g).toMatchObject({ created: false, row: { id: f!.row.id, payload: '{"n":2}' } }); // no coalesce: first payload kept
    expect(await scopeRpc(stub).claim(lease)).toEqual([]); // the follower waits
    await scopeRpc(stub).complete(running!.id, running!.leaseToken!, null);
    expect((await scopeRpc(stub).claim(lease))[0]!.id).toBe(f!.row.id);
    expect(a!.row.id).toBe(running!.id);
  });

  it("coalescing is the call's: a latest call replaces a pending follower enqueued without it; a plain call keeps it", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [keyed(home, "pending", { v: 1 })]);
    const [running] = await scopeRpc(stub).claim(lease);
    const [f] = await put(stub, [keyed(home, "pending", { v: 2 })]);
    const [g] = await put(stub, [keyed(home, "pending+latest", { v: 3 })]); // was a 409 when coalescing was part of the mode
    expect(g).toMatchObject({ created: false, row: { id: f!.row.id, payload: '{"v":3}' } });
    const [h] = await put(stub, [keyed(home, "pending", { v: 4 })]);
    expect(h).toMatchObject({ created: false, row: { id: f!.row.id, payload: '{"v":3}' } });
    expect((await row(stub, running!.id)).payload).toBe('{"v":1}');
    // The mode itself still has to match.
    const out = await scopeRpc(stub).enqueue([keyed(home, "active+latest", { v: 5 })]);
    expect(out).toMatchObject({ ok: false, code: "conflict" });
  });

  it("coalesce latest: a duplicate replaces the pending payload, never the running one", async () => {
    const { home, stub } = await freshScope();
    const [a] = await put(stub, [keyed(home, "pending+latest", { v: 1 })]);
    await put(stub, [keyed(home, "pending+latest", { v: 2 })]);
    expect((await row(stub, a!.row.id)).payload).toBe('{"v":2}');
    await scopeRpc(stub).claim(lease);
    const [f] = await put(stub, [keyed(home, "pending+latest", { v: 3 })]);
    await put(stub, [keyed(home, "pending+latest", { v: 4 })]);
    expect((await row(stub, a!.row.id)).payload).toBe('{"v":2}'); // running: untouched
    expect((await row(stub, f!.row.id)).payload).toBe('{"v":4}');
  });

  it("debounce: a burst runs once, with the last payload, debounceMs after the last duplicate", async () => {
    const { home, stub, clock } = await freshScope();
    const [a] = await put(stub, [keyed(home, "debounce", { v: 1 }, { debounceMs: 1000 })]);
    expect(a!.row.run_at).toBe(T0 + 1000);
    clock!.advance(600);
    await put(stub, [keyed(home, "debounce", { v: 2 }, { debounceMs: 1000 })]);
    clock!.advance(600);
    expect(await scopeRpc(stub).claim(lease)).toEqual([]); // pushed to T0 + 1600
    const [b] = await put(stub, [keyed(home, "debounce", { v: 3 }, { debounceMs: 1000 })]);
    expect(b).toMatchObject({ created: false, row: { id: a!.row.id, run_at: T0 + 2200, payload: '{"v":3}' } });
    clock!.set(T0 + 2200);
    expect(await scopeRpc(stub).claim(lease)).toHaveLength(1);
    expect(await rows(stub)).toHaveLength(1);
  });

  it("throttle: once started, duplicates within the window get that job, even after it finished", async () => {
    const { home, stub, clock } = await freshScope();
    const [a] = await put(stub, [keyed(home, "throttle", {}, { throttleMs: 5000 })]);
    const [running] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(running!.id, running!.leaseToken!, null);
    clock!.advance(4000);
    const [b] = await put(stub, [keyed(home, "throttle", {}, { throttleMs: 5000 })]);
    expect(b).toMatchObject({ created: false, row: { id: a!.row.id, state: "completed" } });
    clock!.advance(1001);
    const [c] = await put(stub, [keyed(home, "throttle", {}, { throttleMs: 5000 })]);
    expect(c!.created).toBe(true);
  });

  it("a key live under another mode is refused, naming both modes, and the batch writes nothing", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [keyed(home, "active", {})]);
    const out = await scopeRpc(stub).enqueue([newJob(home), keyed(home, "debounce", {}, { debounceMs: 10 })]);
    expect(out).toMatchObject({ ok: false, code: "conflict", index: 1 });
    expect(!out.ok && out.message).toMatch(/live under mode active .* asks for mode debounce/);
    expect(await rows(stub)).toHaveLength(1);
  });

  it("a key spans the types of a scope, but a payload is never replaced by another type's", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type: "email", dedupeKey: "k", keyMode: "active+latest", payload: '{"to":"a"}' })]);
    const same = await put(stub, [newJob(home, { type: "email", dedupeKey: "k", keyMode: "active+latest", payload: '{"to":"b"}' })]);
    expect(same[0]!.row.payload).toBe('{"to":"b"}');
    const other = await scopeRpc(stub).enqueue([newJob(home, { type: "sms", dedupeKey: "k", keyMode: "active+latest", payload: '{"to":"c"}' })]);
    expect(other).toMatchObject({ ok: false, code: "conflict" });
    expect((await rows(stub))[0]!.payload).toBe('{"to":"b"}');
  });

  it("a follower waiting behind a running push job does not keep the alarm at now", async () => {
    const { home, stub } = await freshScope();
    // A pushed type whose handler runs for a minute: the dispatcher claims the leader at once.
    const [leader] = await put(stub, [keyed(home, "pending", { ms: 60_000 }, { type: "test.span" })]);
    const { vi } = await import("vitest");
    await vi.waitFor(async () => expect((await row(stub, leader!.row.id)).state).toBe("running"));
    await put(stub, [keyed(home, "pending", { ms: 1 }, { type: "test.span" })]);
    expect(await alarmAt(stub)).toBe(T0 + 30_000); // the leader's lease, not "now"
    await scopeRpc(stub).cancel(leader!.row.id, "done with the test");
  });

  it("a failing job whose follower is already pending ends superseded by it: its own state, counted apart, retryable by hand", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [keyed(home, "pending", { n: 1 })]);
    const [running] = await scopeRpc(stub).claim(lease);
    const [f] = await put(stub, [keyed(home, "pending", { n: 2 })]);
    const out = await scopeRpc(stub).fail(running!.id, running!.leaseToken!, { error: "boom" });
    expect(out).toMatchObject({ ok: true, outcome: "superseded", job: { state: "superseded", cancelReason: `superseded by ${f!.row.id}`, lastError: "boom" } });
    expect((await stub.summary()).types[0]).toMatchObject({ superseded: 1, cancelled: 0, pending: 1 });
    // The superseded holder's later calls are refused as for any ended attempt.
    expect(await scopeRpc(stub).heartbeat(running!.id, running!.leaseToken!, null)).toMatchObject({ ok: false, code: "already_terminal", state: "superseded" });
    const [follower] = await scopeRpc(stub).claim(lease);
    expect(follower!.id).toBe(f!.row.id);
    await scopeRpc(stub).complete(follower!.id, follower!.leaseToken!, null);
    expect(await scopeRpc(stub).retry(running!.id)).toMatchObject({ ok: true, job: { state: "pending" } });
    const steps = (await stub.timeline(running!.id, 100))!.steps.map((s) => [s.state, s.note]);
    expect(steps).toContainEqual(["superseded", `superseded by ${f!.row.id}`]);
  });
});
