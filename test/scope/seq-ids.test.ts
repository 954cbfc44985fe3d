/**
 * Ids a home makes from the seq (job/home.ts, seqLocalId): an enqueue without `id` gets one, which every
 * call that names a job finds by its seq — with no id index entry — and which never names a later job that
 * got a deleted job's seq (docs/design.md "What a job costs").
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { jobIdFor, seqOfJobId } from "../../src/job/home";
import { scopeRpc } from "../helpers/scope";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob, rows } from "../helpers/scope";

const DAY = 86_400_000;
const lease = { worker: "w", types: null, limit: 1, leaseMs: 30_000 };

describe("ids made from the seq", () => {
  it("an enqueue without id answers ids made from the seq; get, claim, heartbeat, logs, complete and cancel find them", async () => {
    const { home, stub } = await freshScope();
    const out = await scopeRpc(stub).enqueue([newJob(home, { ownId: false, idFromQueue: true }), newJob(home, { ownId: false, idFromQueue: true }), newJob(home, { id: "mine" })]);
    if (!out.ok) throw new Error(out.message);
    const [a, b, mine] = out.results.map((r) => r.id!);
    const stored = await rows(stub);
    expect(stored.map((r) => [r.id, r.seq])).toEqual([
      [a, seqOfJobId(a!)],
      [b, seqOfJobId(b!)],
      [mine, stored[2]!.seq],
    ]);
    expect(a).toMatch(/~[0-9a-z]+$/);
    expect(seqOfJobId(mine!)).toBeNull();
    expect((await scopeRpc(stub).get(a!))?.id).toBe(a);
    expect((await scopeRpc(stub).get(mine!))?.id).toBe(mine);
    const leased = await scopeRpc(stub).claim({ ...lease, limit: 3 });
    expect(leased.map((j) => j.id)).toEqual([a, b, mine]);
    const [la, lb] = leased;
    expect(await scopeRpc(stub).heartbeat(a!, la!.leaseToken!, null)).toMatchObject({ ok: true });
    expect(await scopeRpc(stub).appendLogs(a!, la!.leaseToken!, [{ at: 1, message: "hi" }])).toMatchObject({ ok: true, stored: 1 });
    expect((await scopeRpc(stub).logs(a!))?.map((l) => l.message)).toEqual(["hi"]);
    expect(await scopeRpc(stub).complete(a!, la!.leaseToken!, null)).toMatchObject({ ok: true, job: { id: a, state: "completed" } });
    expect(await scopeRpc(stub).cancel(b!, "done with it")).toMatchObject({ ok: true, job: { id: b, state: "cancelled" } });
    expect(await scopeRpc(stub).retry(b!)).toMatchObject({ ok: true, job: { id: b, state: "pending" } });
    expect(lb!.id).toBe(b);
    // A seq with another id's time part, and a seq that is not there, name nothing.
    expect(await scopeRpc(stub).get(a!.replace(/^(.*\.)[0-9a-z]{9}~/, "$1000000000~"))).toBeNull();
    expect(await scopeRpc(stub).get(a!.replace(/~[0-9a-z]+$/, "~zzzz"))).toBeNull();
  });

  it("writes no id index entry for an id made from the seq, and one for a caller's", async () => {
    const { home, stub } = await freshScope();
    await scopeRpc(stub).enqueue([newJob(home, { ownId: false, idFromQueue: true }), newJob(home, { id: "given" })]);
    const entries = await runInDurableObject(stub, (_o: ScopeDO, state) =>
      state.storage.sql.exec<{ id: string }>("SELECT id FROM job INDEXED BY job_id_idx WHERE id_seq = 0").toArray().map((r) => r.id),
    );
    expect(entries).toEqual([jobIdFor(home, "given")]);
  });

  it("a seq given again after its job was deleted is a new id: the old one names nothing", async () => {
    const { home, stub, clock } = await freshScope();
    const first = await scopeRpc(stub).enqueue([newJob(home, { ownId: false, idFromQueue: true })]);
    if (!first.ok) throw new Error(first.message);
    const old = first.results[0]!.id!;
    const [leased] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(old, leased!.leaseToken!, null);
    clock!.advance(DAY);
    await runDurableObjectAlarm(stub);
    expect(await rows(stub)).toEqual([]);
    const next = await scopeRpc(stub).enqueue([newJob(home, { ownId: false, idFromQueue: true })]);
    if (!next.ok) throw new Error(next.message);
    const fresh = next.results[0]!.id!;
    expect(seqOfJobId(fresh)).toBe(seqOfJobId(old));
    expect(fresh).not.toBe(old);
    expect(await scopeRpc(stub).get(old)).toBeNull();
    expect((await scopeRpc(stub).get(fresh))?.id).toBe(fresh);
  });
});
