/**
 * The EdgeQueue RPC entrypoint, called the way a bound Worker calls it
 * (through the main module's exports, a real RPC hop).
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { EdgeQueue } from "../../src/coordinator/rpc";
import { uniqueScope, uniqueType } from "../helpers/api";

const queue = (exports as unknown as { EdgeQueue: Service<EdgeQueue> }).EdgeQueue;

describe("EdgeQueue RPC entrypoint", () => {
  it("offers the HTTP operations with the same shapes, tagged ok", async () => {
    const type = uniqueType();
    const e = await queue.enqueue({ type, payload: { a: 1 }, scope: uniqueScope() });
    if (!e.ok) throw new Error(e.error.message);
    expect(e.created).toBe(true);
    const got = await queue.getJob(e.id);
    expect(got).toMatchObject({ ok: true, job: { id: e.id, payload: { a: 1 } } });
    const batch = await queue.enqueueBatch({ jobs: [{ type, payload: {} }] });
    expect(batch).toMatchObject({ ok: true, results: [{ created: true }] });
    const c = await queue.claim({ worker: "rpc", types: [type], limit: 5 });
    if (!c.ok) throw new Error(c.error.message);
    expect(c.jobs.length).toBeGreaterThanOrEqual(1);
    const leased = c.jobs[0]!;
    expect(await queue.heartbeat(leased.id, { leaseToken: leased.leaseToken })).toMatchObject({ ok: true });
    expect(await queue.complete(leased.id, { leaseToken: leased.leaseToken, result: { r: 1 } })).toMatchObject({ ok: true, job: { state: "completed" } });
    expect(await queue.complete(leased.id, { leaseToken: leased.leaseToken })).toMatchObject({ ok: false, error: { code: "already_terminal" } });
    expect(await queue.stats({ type })).toMatchObject({ ok: true });
    expect(await queue.listJobs({ type, limit: 1 })).toMatchObject({ ok: true });
    expect(await queue.health()).toMatchObject({ ok: true, version: "0.1.0" });
  });

  it("refuses values JSON cannot carry, naming the field", async () => {
    const type = uniqueType();
    expect(await queue.enqueue({ type, payload: { when: new Date(0) } as never })).toMatchObject({
      ok: false,
      error: { code: "invalid_request", details: [{ path: "payload.when", message: "a Date is not a plain JSON object" }] },
    });
    expect(await queue.enqueue({ type, payload: { a: undefined } as never })).toMatchObject({
      ok: false,
      error: { details: [{ path: "payload.a", message: "undefined is not JSON" }] },
    });
    expect(await queue.enqueue({ type, payload: { n: 10n } as never })).toMatchObject({ ok: false, error: { details: [{ path: "payload.n" }] } });
    expect(await queue.enqueue({ type, payload: new Map() as never })).toMatchObject({ ok: false, error: { details: [{ path: "payload" }] } });
    expect(await queue.listJobs({ type })).toMatchObject({ ok: true, items: [] });
  });

  it("returns errors as data: not_found, conflict, lease_lost", async () => {
    expect(await queue.getJob("nope")).toMatchObject({ ok: false, error: { code: "not_found" } });
    const e = await queue.enqueue({ type: uniqueType(), payload: {} });
    if (!e.ok) throw new Error();
    expect(await queue.retryJob(e.id)).toMatchObject({ ok: false, error: { code: "conflict" } });
    expect(await queue.fail(e.id, { leaseToken: "x", error: "e" })).toMatchObject({ ok: false, error: { code: "lease_lost", details: { reason: "expired" } } });
    expect(await queue.cancelJob(e.id, { reason: "r" })).toMatchObject({ ok: true, job: { state: "cancelled" } });
    expect(await queue.cancelScope(uniqueScope())).toEqual({ ok: true, cancelled: 0 });
    expect(await queue.prune({ olderThan: 0 })).toEqual({ ok: true, deleted: 0 });
  });
});
