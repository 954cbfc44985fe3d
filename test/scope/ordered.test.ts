/**
 * `ordered = true` (docs/guards.md "Guards: scopes, pools and ordering"): one job of the type at a time per
 * object, in enqueue order; the oldest live job — running, even with its lease
 * lapsed, or pending and backing off — holds the rest until it ends. An event
 * consumer's deliveries then run in event order.
 */
import { scopeRpc } from "../helpers/scope";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load";
import { api, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";
import { freshScope, newJob, put } from "../helpers/scope";

const claim = (limit = 10) => ({ worker: "w", types: ["pull.ordered"], limit, leaseMs: 30_000 });

describe("ordered types", () => {
  it("one at a time in enqueue order: a running head, a lapsed lease or a backing-off head holds the rest until it is quarantined", async () => {
    const { home, stub, clock } = await freshScope();
    const [a, b, c] = await put(stub, [
      newJob(home, { type: "pull.ordered", maxAttempts: 2 }),
      newJob(home, { type: "pull.ordered" }),
      // A higher priority does not jump the line of an ordered type.
      newJob(home, { type: "pull.ordered", priority: 10 }),
    ]);
    const ids = async (limit?: number) => (await scopeRpc(stub).claim(claim(limit))).map((r) => r.id);
    const [head] = await scopeRpc(stub).claim(claim());
    expect(head!.id).toBe(a!.row.id);
    expect(await ids()).toEqual([]);
    clock!.advance(31_000); // the head's lease lapsed, not yet reaped: still the head
    expect(await ids()).toEqual([]);
    clock!.set(clock!.now() - 31_000);
    expect(await scopeRpc(stub).fail(head!.id, head!.leaseToken!, { error: "first try fails" })).toMatchObject({ ok: true, outcome: "retry_scheduled" });
    expect(await ids()).toEqual([]); // backing off for 60 s, and holding b and c
    clock!.advance(60_000);
    const [again] = await scopeRpc(stub).claim(claim());
    expect([again!.id, again!.attempts]).toEqual([a!.row.id, 2]);
    expect(await scopeRpc(stub).fail(again!.id, again!.leaseToken!, { error: "second try fails" })).toMatchObject({ ok: true, outcome: "failed" });
    const [second] = await scopeRpc(stub).claim(claim());
    expect(second!.id).toBe(b!.row.id);
    expect(await ids()).toEqual([]);
    await scopeRpc(stub).complete(second!.id, second!.leaseToken!, null);
    expect(await ids()).toEqual([c!.row.id]);
  });

  it("an inline claim of an ordered type leases only the head, and only when nothing of the type runs", async () => {
    const { home, stub } = await freshScope();
    const [a] = await put(stub, [newJob(home, { type: "pull.ordered" })]);
    const keyed = (n: number) => newJob(home, { type: "pull.ordered", dedupeKey: `k${n}`, keyMode: "pending" });
    // Behind the due head a: joins the line, not leased.
    expect(await scopeRpc(stub).claimOrEnqueue(keyed(1), "inline", 30_000)).toMatchObject({ ok: true, leased: null });
    const [head] = await scopeRpc(stub).claim(claim());
    expect(head!.id).toBe(a!.row.id);
    await scopeRpc(stub).complete(head!.id, head!.leaseToken!, null);
    // Now k1's job is the head: an inline request for it leases it.
    const again = await scopeRpc(stub).claimOrEnqueue(keyed(1), "inline", 30_000);
    expect(again).toMatchObject({ ok: true, leased: { dedupeKey: "k1" } });
    // While it runs, another request waits, even as the head of nothing else.
    expect(await scopeRpc(stub).claimOrEnqueue(keyed(2), "inline", 30_000)).toMatchObject({ ok: true, leased: null });
  });

  it("a pushed topic consumer with ordered = true runs its deliveries one at a time, in event order, a failing one first", async () => {
    const key = crypto.randomUUID();
    const deliveries: string[] = [];
    for (const [i, failFirst] of [[1, true], [2, false], [3, false]] as const) {
      const r = await api("POST", "/v1/topics/test.ordered.topic/events", { id: `${key}-${i}`, payload: { ms: 30, key, failFirst } });
      expect(r.status).toBe(202);
      deliveries.push(r.body.deliveries[0]);
    }
    for (const id of deliveries) await waitForJob(id, (j) => j.state === "completed");
    const spans = (await probe.spans(key)).sort((x, y) => x.startedAt - y.startedAt);
    expect(spans.map((s) => s.id)).toEqual([deliveries[0], deliveries[0], deliveries[1], deliveries[2]]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.startedAt).toBeGreaterThanOrEqual(spans[i - 1]!.finishedAt);
  });

  it("refuses ordered on a sharded type, naming the field", () => {
    expect(() => parseConfig({ types: { t: { ordered: true, shards: 4 } } })).toThrow(/types.t.ordered: ordered keeps order within one object: give the type shards = 1/);
    expect(parseConfig({ types: { t: { ordered: true } } }).typeSettings("t").ordered).toBe(true);
  });
});
