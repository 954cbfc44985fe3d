/**
 * A keyed job with a journal is never superseded (docs/guarantees.md "Keys
 * and journals"): when its attempt ends back in pending while a follower
 * waits, it keeps its journal and its follower waits behind it — the
 * follower would start from the top with new idempotency keys and do the
 * finished steps' side effects again.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import type { LeasedJob } from "../../src/job/schemas";
import { freshScope, newJob } from "../helpers/scope";

const KEYED = { type: "test.job", dedupeKey: "acct", keyMode: "pending" as const };

async function withFollower(end: (o: ScopeDO, held: LeasedJob) => Promise<unknown>, journal = true) {
  const { home, stub } = await freshScope();
  return runInDurableObject(stub, async (o: ScopeDO) => {
    const claim = () => o.claim({ worker: "w", types: ["test.job"], limit: 5, leaseMs: 30_000 });
    await o.enqueue([newJob(home, KEYED)]);
    const [held] = await claim();
    const now = o.clock.now();
    if (journal) {
      const step = { id: held!.id, op: "commit" as const, seq: 0, name: "charge", result: "1", startedAt: now, start: { at: now, seed: "s" } };
      expect((await o.appendStep(step, held!.leaseToken!)).ok).toBe(true);
    }
    const follower = await o.enqueue([newJob(home, { ...KEYED, payload: JSON.stringify({ n: 2 }) })]);
    const followerId = follower.ok ? follower.results[0]!.job!.id : "";
    await end(o, held!);
    const states = () => Object.fromEntries(o.store.sql.exec<{ id: string; state: string }>("SELECT id, state FROM job").toArray().map((r) => [r.id === held!.id ? "first" : r.id === followerId ? "follower" : r.id, r.state]));
    const after = states();
    const next = (await claim()).map((r) => (r.id === held!.id ? "first" : "follower"));
    return { after, next };
  });
}

describe("a keyed job with a journal whose attempt ends back in pending while a follower waits", () => {
  it("after a release: it is pending again, and the next claim gets it, not its follower", async () => {
    expect(await withFollower((o, held) => o.release(held.id, held.leaseToken!))).toEqual({ after: { first: "pending", follower: "pending" }, next: ["first"] });
  });

  it("after a retry: its follower waits through the backoff", async () => {
    const out = await withFollower((o, held) => o.fail(held.id, held.leaseToken!, { error: "x", retryAfterMs: 60_000 }));
    expect(out).toEqual({ after: { first: "pending", follower: "pending" }, next: [] });
  });

  it("after a sleep: its follower waits while it sleeps", async () => {
    const out = await withFollower((o, held) =>
      o.sleep(held.id, held.leaseToken!, { name: "nap", seq: 1, until: 0, durationMs: 60_000, startedAt: o.clock.now(), start: { at: o.clock.now(), seed: "s" } }),
    );
    expect(out).toEqual({ after: { first: "pending", follower: "pending" }, next: [] });
  });

  it("without a journal, the follower supersedes it as before", async () => {
    const out = await withFollower((o, held) => o.release(held.id, held.leaseToken!), false);
    expect(out).toEqual({ after: { first: "superseded", follower: "pending" }, next: ["follower"] });
  });

  it("a duplicate enqueued meanwhile joins the follower, not the journaled job", async () => {
    const { home, stub } = await freshScope();
    const joined = await runInDurableObject(stub, async (o: ScopeDO) => {
      await o.enqueue([newJob(home, KEYED)]);
      const [held] = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
      const now = o.clock.now();
      await o.appendStep({ id: held!.id, op: "commit", seq: 0, name: "charge", result: "1", startedAt: now, start: { at: now, seed: "s" } }, held!.leaseToken!);
      const f = await o.enqueue([newJob(home, KEYED)]);
      await o.release(held!.id, held!.leaseToken!);
      const dup = await o.enqueue([newJob(home, { ...KEYED, keyMode: "pending+latest", payload: JSON.stringify({ latest: true }) })]);
      const first = o.store.sql.exec<{ payload: string }>("SELECT payload FROM job WHERE id = ?", held!.id).one().payload;
      return { follower: f.ok && f.results[0]!.job!.id, got: dup.ok && dup.results[0]!.job!.id, created: dup.ok && dup.results[0]!.created, firstPayload: first };
    });
    expect(joined.got).toBe(joined.follower);
    expect(joined.created).toBe(false);
    expect(joined.firstPayload).not.toContain("latest");
  });

  it("a duplicate enqueued while it sleeps with no follower yet becomes its follower: it never joins or rewrites the journaled job", async () => {
    const { home, stub } = await freshScope();
    const out = await runInDurableObject(stub, async (o: ScopeDO) => {
      await o.enqueue([newJob(home, KEYED)]);
      const [held] = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
      const now = o.clock.now();
      await o.appendStep({ id: held!.id, op: "commit", seq: 0, name: "charge", result: "1", startedAt: now, start: { at: now, seed: "s" } }, held!.leaseToken);
      await o.sleep(held!.id, held!.leaseToken, { name: "nap", seq: 1, until: 0, durationMs: 60_000, startedAt: now, start: { at: now, seed: "s" } });
      const dup = await o.enqueue([newJob(home, { ...KEYED, keyMode: "pending+latest", payload: JSON.stringify({ latest: true }) })]);
      const first = o.store.sql.exec<{ payload: string }>("SELECT payload FROM job WHERE id = ?", held!.id).one().payload;
      return { joinedFirst: dup.ok && dup.results[0]!.job!.id === held!.id, created: dup.ok && dup.results[0]!.created, firstPayload: first };
    });
    expect(out).toEqual({ joinedFirst: false, created: true, firstPayload: expect.not.stringContaining("latest") });
  });
});
