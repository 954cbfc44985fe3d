/**
 * The one commit path (docs/design.md "One commit path"): each write's record
 * of what it changed, and the one order in which its follow-ups run — and the
 * slips the hand-picked follow-ups had (a bulk retry or a resolved step that
 * woke no parked claim, an inline enqueue with no `enqueued` point).
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import type { Changes } from "../../src/scope/jobs/changes";
import { changed, nothing } from "../../src/scope/jobs/changes";
import { Feed } from "../../src/scope/jobs/feed";
import type { Capability } from "../../src/scope/jobs/capability";
import { wakeTypes } from "../../src/scope/pull/pull";
import { Retention } from "../../src/scope/retention/retention";

const retention = (o: ScopeDO) => partsOf(o).find(Retention);
import { FollowUps } from "../../src/scope/follow-ups";
import { writes } from "../../src/scope/writes";
import { loadConfig } from "../../src/config/load";
import type { JobRow } from "../../src/scope/jobs/job-row";
import { ManualClock } from "../../src/clock";
import { env, freshScope, newJob, partsOf } from "../helpers/scope";

/** What a record says, in a form a table can hold. */
function said(c: Changes) {
  return {
    events: c.events.map((r) => r.state),
    quiet: c.quiet.length,
    created: c.created.length,
    released: c.released?.rows.length ?? 0,
    leaseLost: c.leaseLost.map((l) => l.write),
    aborted: c.aborted.length,
    reaped: c.reaped.length,
    permits: c.permits === null ? null : c.permits.refundLease ? "refund" : "return",
    renew: c.renew !== null,
    fill: c.fill,
    report: c.report,
    arm: c.arm,
  };
}

const NONE = { events: [], quiet: 0, created: 0, released: 0, leaseLost: [], aborted: 0, reaped: 0, permits: null, renew: false, fill: false, report: null, arm: false };
const COMMITTED = { ...NONE, report: "now", arm: true };
const SETTLED = { ...COMMITTED, permits: "return", fill: true };

describe("each write's record", () => {
  it("says what the write changed and what must hear of it", async () => {
    const { home, stub } = await freshScope();
    const table = await runInDurableObject(stub, async (o: ScopeDO) => {
      const s = o.store;
      const out: [string, ReturnType<typeof said>][] = [];
      const note = (name: string, c: Changes) => out.push([name, said(c)]);
      const clock = o.clock as ManualClock;
      let now = clock.now();
      const enq = (over = {}) => {
        const w = writes.enqueue(s, [newJob(home, over)], now);
        note("enqueue", w.changes);
        if (!w.answer.ok) throw new Error(w.answer.message);
        return w.answer.results[0]!.row!;
      };
      const lease = () => o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 }).then((r) => r[0]!);

      enq();
      let held = await lease();
      note("heartbeat", writes.heartbeat(s, held.id, held.leaseToken!, null, now).changes);
      note("heartbeat leaseMs", writes.heartbeat(s, held.id, held.leaseToken!, 60_000, now).changes);
      note("heartbeat stale", writes.heartbeat(s, held.id, "stale", null, now).changes);
      note("appendStep", writes.appendStep(s, { id: held.id, op: "begin", seq: 0, name: "charge", result: null, startedAt: now, start: { at: now, seed: "s" } }, held.leaseToken!, now).changes);
      note("complete", writes.complete(s, held.id, held.leaseToken!, null, now).changes);
      note("complete again", writes.complete(s, held.id, held.leaseToken!, null, now).changes);

      enq();
      held = await lease();
      note("release", writes.release(s, held.id, held.leaseToken!, now).changes);
      held = await lease();
      note("sleep", writes.sleep(s, held.id, held.leaseToken!, { name: "nap", seq: 0, until: now + 1000, startedAt: now, start: { at: now, seed: "s" } }, now).changes);
      now = clock.advance(2000).now();
      held = await lease();
      note("fail", writes.fail(s, held.id, held.leaseToken!, { error: "boom", fatal: true }, now).changes);
      note("retry", writes.retry(s, held.id, now).changes);
      held = await lease();
      writes.fail(s, held.id, held.leaseToken!, { error: "boom", fatal: true }, now);
      note("retryFailed", writes.retryFailed(s, null, null, now).changes);
      note("cancel", writes.cancel(s, held.id, "no", now).changes);
      note("rerun", writes.rerun(s, held.id, { fromStep: null, payload: null }, now).changes);

      const keyed = enq({ dedupeKey: "k", keyMode: "pending" });
      note("cancelKeys", writes.cancelKeys(s, "test.job", ["k"], null, now).changes);
      note("claimOrEnqueue", writes.claimOrEnqueue(s, newJob(home, { dedupeKey: "inline", keyMode: "pending" }), "w", 30_000, now).changes);
      note("claimOrEnqueue follower", writes.claimOrEnqueue(s, newJob(home, { dedupeKey: "inline", keyMode: "pending" }), "w", 30_000, now).changes);
      note("claimKey held", writes.claimKey(s, "test.job", "inline", "w", 30_000, now).changes);
      note("cancelAll", writes.cancelAll(s, false, null, now).changes);
      note("prune", retention(o).prune(now + 1, ["cancelled"], now).changes);
      enq();
      held = await lease();
      note("reap", writes.reap(s, now + 10 * 60_000).changes);
      note("reap nothing", writes.reap(s, now + 10 * 60_000).changes);
      note("orphans", writes.orphans(s, now).changes);
      note("sweep nothing", retention(o).sweep(now).changes);
      note("sweep", retention(o).sweep(now + 30 * 86_400_000).changes);
      expect(keyed.dedupe_key).toBe("k");
      return out;
    });
    expect(table).toEqual([
      ["enqueue", { ...COMMITTED, created: 1, quiet: 1, fill: true }],
      ["heartbeat", { ...NONE, renew: true }],
      ["heartbeat leaseMs", { ...NONE, renew: true, arm: true }],
      ["heartbeat stale", { ...NONE, leaseLost: ["heartbeat"] }],
      ["appendStep", NONE],
      ["complete", { ...SETTLED, events: ["completed"] }],
      ["complete again", NONE],
      ["enqueue", { ...COMMITTED, created: 1, quiet: 1, fill: true }],
      ["release", { ...COMMITTED, released: 1, permits: "refund", fill: true }],
      ["sleep", { ...SETTLED, events: ["pending"] }],
      ["fail", { ...SETTLED, events: ["failed"] }],
      ["retry", { ...COMMITTED, quiet: 1, fill: true }],
      ["retryFailed", { ...COMMITTED, quiet: 1, fill: true }],
      ["cancel", { ...SETTLED, events: ["cancelled"], aborted: 1 }],
      ["rerun", { ...COMMITTED, created: 1, quiet: 1, fill: true }],
      ["enqueue", { ...COMMITTED, created: 1, quiet: 1, fill: true }],
      ["cancelKeys", { ...SETTLED, events: ["cancelled"], aborted: 1 }],
      ["claimOrEnqueue", { ...COMMITTED, created: 1, events: ["running"] }],
      ["claimOrEnqueue follower", { ...COMMITTED, created: 1, quiet: 1 }],
      ["claimKey held", NONE],
      ["cancelAll", { ...COMMITTED, events: ["cancelled", "cancelled", "cancelled"], aborted: 3, permits: "return" }],
      ["prune", { ...COMMITTED, permits: "return" }],
      ["enqueue", { ...COMMITTED, created: 1, quiet: 1, fill: true }],
      ["reap", { ...COMMITTED, events: ["pending"], reaped: 1 }],
      ["reap nothing", { ...NONE, arm: true }],
      ["orphans", NONE],
      ["sweep nothing", NONE],
      ["sweep", { ...COMMITTED, permits: "return" }],
    ]);
  });
});

describe("what follows a write", () => {
  it("walks the capabilities in one list: each is told, then each follows, then the alarm is set", async () => {
    const calls: string[] = [];
    const feed = new Feed(() => true);
    const cap = (name: string): Capability => ({
      name,
      told: (c, rows) => void calls.push(`${name}.told:${rows.length}:${c.gathered.fed.length}`),
      follow: async () => void calls.push(`${name}.follow`),
    });
    const followUps = new FollowUps([cap("a"), cap("b")], { feed, arm: async () => void calls.push("arm") });
    const row = (over: Partial<JobRow>) => ({ id: "j", type: "test.job", state: "pending", run_at: 0, dedupe_key: null, ...over }) as JobRow;
    // What the write gathered in its transaction rides in its record: a step for the watchers, an outbox mark.
    feed.step("j", { seq: 0, name: "s", kind: "step", startedAt: 0, finishedAt: 0, attempt: 1 });
    await followUps.run(changed({ events: [row({})], quiet: [row({})] }), 1);
    expect(calls).toEqual(["a.told:2:1", "b.told:2:1", "a.follow", "b.follow", "arm"]);
    // A write that arms nothing still sets the alarm when it owed another object something (its row's send time).
    calls.length = 0;
    feed.owe();
    await followUps.run(nothing(), 1);
    expect(calls).toEqual(["a.told:0:0", "b.told:0:0", "a.follow", "b.follow", "arm"]);
    calls.length = 0;
    await followUps.run(nothing(), 1);
    expect(calls).toEqual(["a.told:0:0", "b.told:0:0", "a.follow", "b.follow"]);
  });

  it("the list's order: noted (retention, push) before told (watching); permits back (pull) before the outbox; the report last", async () => {
    const { stub } = await freshScope();
    const names = await runInDurableObject(stub, (o: ScopeDO) => partsOf(o).capabilities.map((c) => c.name));
    expect(names).toEqual(["jobs", "retention", "batches", "pull", "workflow", "push", "watching", "errors", "report"]);
  });

  it("pulled types wake; pushed ones never (their object dispatches them itself)", () => {
    const config = loadConfig(env);
    const row = (over: Partial<JobRow>) => ({ id: "j", type: "test.job", state: "pending", run_at: 0, dedupe_key: null, ...over }) as JobRow;
    const pushed = new Set(config.pushTypes);
    expect([...wakeTypes(config, pushed, [row({}), row({ type: "test.span" })], 1)]).toEqual(["test.job"]);
  });
});

describe("follow-ups the hand-picked paths missed", () => {
  /** woken: the pulled types whose parked claims the object tells while `act` runs, after `setup` (wait-notify.ts). */
  async function woken<T>(setup: (o: ScopeDO, home: string) => Promise<T>, act: (o: ScopeDO, set: T) => Promise<void>): Promise<string[]> {
    const { home, stub } = await freshScope();
    return runInDurableObject(stub, async (o: ScopeDO) => {
      const set = await setup(o, home);
      const told: string[] = [];
      partsOf(o).pull.waits.due = (types) => void told.push(...types);
      await act(o, set);
      return told;
    });
  }

  /** A failed pulled job with an atMostOnce step that began and never finished. */
  async function failWithOpenStep(o: ScopeDO, home: string): Promise<string> {
    await o.enqueue([newJob(home, { type: "test.job" })]);
    const [held] = await o.claim({ worker: "w", types: ["test.job"], limit: 1, leaseMs: 30_000 });
    const now = o.clock.now();
    expect((await o.appendStep({ id: held!.id, op: "begin", seq: 0, name: "charge", result: null, startedAt: now, start: { at: now, seed: "s" } }, held!.leaseToken!)).ok).toBe(true);
    expect((await o.fail(held!.id, held!.leaseToken!, { error: "x", fatal: true })).ok).toBe(true);
    return held!.id;
  }

  it("a bulk retry of failed jobs wakes the claims parked for their type", async () => {
    const told = await woken(failWithOpenStep, async (o) => {
      expect((await o.retryFailed(null, null)).retried).toBe(1);
    });
    expect(told).toEqual(["test.job"]);
  });

  it("a resolved step puts its job back and wakes the claims parked for its type", async () => {
    const told = await woken(failWithOpenStep, async (o, id) => {
      expect((await o.resolveStep(id, "charge", "true")).ok).toBe(true);
    });
    expect(told).toEqual(["test.job"]);
  });

  it("an inline claim that creates its job writes the enqueued point, as every enqueue does", async () => {
    const { home, stub } = await freshScope();
    const points = await runInDurableObject(stub, async (o: ScopeDO) => {
      const written: AnalyticsEngineDataPoint[] = [];
      (partsOf(o).watching.events as unknown as { analytics: AnalyticsEngineDataset }).analytics = { writeDataPoint: (p?: AnalyticsEngineDataPoint) => void written.push(p!) };
      await o.claimOrEnqueue(newJob(home, { dedupeKey: "k", keyMode: "pending" }), "w", 30_000);
      return written.map((p) => p.blobs?.[1]);
    });
    expect(points).toEqual(["enqueued", "started"]);
  });
});
