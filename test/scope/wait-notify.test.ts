/**
 * Which writes tell parked pull claims of due work (scope/pull/wait-notify.ts):
 * the notices are recorded in the object instead of reaching a wait object.
 */
import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { WaitNotifier } from "../../src/scope/pull/wait-notify";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob, put, type ScopeStub, partsOf } from "../helpers/scope";

/** recordNotices: from now on, the types this object tells parked claims about land in the returned array. */
async function recordNotices(stub: ScopeStub): Promise<string[]> {
  const told: string[] = [];
  await runInDurableObject(stub, (o: ScopeDO) => {
    partsOf(o).pull.waits = new WaitNotifier(async (type) => told.push(type), () => undefined);
  });
  return told;
}

const lease = { worker: "w", types: null, limit: 1, leaseMs: 30_000 };

describe("notices to parked claims", () => {
  it("a keyed job that completes tells of its type: the follower waiting behind it is due now", async () => {
    const { home, stub } = await freshScope();
    const keyed = (n: number) => newJob(home, { dedupeKey: "k", keyMode: "pending", payload: JSON.stringify({ n }) });
    await put(stub, [keyed(1)]);
    const [running] = await scopeRpc(stub).claim(lease);
    await put(stub, [keyed(2)]);
    const told = await recordNotices(stub);
    await scopeRpc(stub).complete(running!.id, running!.leaseToken!, null);
    expect(told).toEqual(["test.job"]);
  });

  it("an enqueue of a due job tells; a delayed one does not", async () => {
    const { home, stub } = await freshScope();
    // The object's first pause sync (the answer to its first report) tells of every pending pulled type: let it land first.
    await put(stub, [newJob(home, { type: "other.job", delayMs: 60_000 })]);
    await stub.flushCatalog();
    const told = await recordNotices(stub);
    await put(stub, [newJob(home, { delayMs: 60_000 })]);
    expect(told).toEqual([]);
    await put(stub, [newJob(home)]);
    expect(told).toEqual(["test.job"]);
  });
});
