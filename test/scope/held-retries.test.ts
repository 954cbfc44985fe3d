/**
 * Held retries (docs/design.md "Held retries", scope/jobs/held-retries.ts): a pushed job's failed attempt goes back
 * to pending for its backoff without a claim index entry, its time in its object's memory, and restarts straight to
 * its handler; a new instance gives held rows back to the index; a cancel leaves the hold; a held retry behind due
 * jobs of its type is claimed in order with them.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { scopeRpc } from "../helpers/scope";
import { ManualClock } from "../../src/clock";
import { restartDue } from "../../src/scope/push/held-restart";
import { enqueueJobs } from "../../src/scope/jobs/enqueue";
import { applyAttemptEnd } from "../../src/scope/jobs/attempt-end";
import { cancelJob } from "../../src/scope/jobs/change";
import { HELD_WAIT_MAX_MS, releaseHeld, restartHeld } from "../../src/scope/jobs/held-retries";
import { HISTORY_ROW_MAX, jobTimeline } from "../../src/scope/jobs/timeline";
import { PUSH_WORKER } from "../../src/scope/jobs/pushed-leases";
import type { JobRow } from "../../src/scope/jobs/job-row";
import { alarmAt, env, freshScope, newJob, partsOf, restartCold, row, T0, useClock, type ScopeStub } from "../helpers/scope";

const INDEXED = "SELECT count(*) AS n FROM job INDEXED BY job_claim_idx WHERE state = 'pending' AND held = 0 AND type = 'demo.flaky'";
const MARKED = "SELECT count(*) AS n FROM meta WHERE key = 'held_retries'";

/** A scope object on a stopped clock that knows the paused set (its jobs may go straight to a handler). */
async function knowing(): Promise<{ home: string; stub: ScopeStub; clock: ManualClock }> {
  const clock = new ManualClock(T0);
  const { home, stub } = await freshScope(clock);
  // Backoff's jitter at its top: a retry is never due at once (a due one would restart before a test looks).
  await useClock(stub, clock, () => 0.999);
  await runInDurableObject(stub, (o: ScopeDO) => partsOf(o).pause.ensure());
  return { home, stub, clock };
}

/** A demo.flaky job whose first attempt fails, held once that attempt has ended. */
async function heldRetry(stub: ScopeStub, home: string, payload = { failTimes: 1 }): Promise<string> {
  const out = await scopeRpc(stub).enqueue([newJob(home, { type: "demo.flaky", payload: JSON.stringify(payload) })]);
  if (!out.ok) throw new Error(out.message);
  const id = out.results[0]!.id!;
  await vi.waitFor(async () => expect(await row(stub, id)).toMatchObject({ state: "pending", held: 1 }), { timeout: 10_000, interval: 10 });
  return id;
}

const count = (stub: ScopeStub, q: string) => runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<{ n: number }>(q).one().n);

describe("held retries", () => {
  it("a pushed job's failed attempt is held out of the claim index, the alarm at its time, and restarts straight to its handler", async () => {
    const { home, stub, clock } = await knowing();
    const id = await heldRetry(stub, home);
    const held = await row(stub, id);
    expect(held).toMatchObject({ attempts: 1, lease_token: null, lease_owner: null });
    expect(held.run_at).toBeGreaterThan(clock.now());
    expect(await count(stub, INDEXED)).toBe(0);
    expect(await count(stub, MARKED)).toBe(1);
    // Its timeline entry is in the row, written by the retry's own update (timeline.ts): no job_transition row.
    expect(await count(stub, "SELECT count(*) AS n FROM job_transition")).toBe(0);
    expect(await count(stub, "SELECT json_array_length(history) AS n FROM job")).toBe(1);
    expect(await runInDurableObject(stub, (o: ScopeDO) => o.store.pushed.held.size)).toBe(1);
    expect(await alarmAt(stub)).toBe(held.run_at);
    // Backing off, it is scheduled: the summary reads its time from memory.
    const s = (await stub.summary()).types.find((t) => t.type === "demo.flaky")!;
    expect(s).toMatchObject({ pending: 0, scheduled: 1, nextRunAt: held.run_at });

    clock.set(held.run_at);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await row(stub, id)).state).toBe("completed"), { timeout: 10_000, interval: 10 });
    expect(await row(stub, id)).toMatchObject({ attempts: 2, held: 0, lease_kept: 0 });
    expect(await count(stub, INDEXED)).toBe(0);
    // Its moves were counted in memory and paid with the summary (count-debt.ts): exact, as the trigger's were.
    const done = (await stub.summary()).types.find((t) => t.type === "demo.flaky")!;
    expect(done).toMatchObject({ pending: 0, scheduled: 0, running: 0, completed: 1 });
    const counted = await count(stub, "SELECT m_retried * 1000 + m_started * 100 + m_enqueued * 10 + m_completed AS n FROM type_count WHERE type = 'demo.flaky'");
    expect(counted).toBe(1000 + 200 + 10 + 1);
    const timeline = await stub.timeline(id, 50);
    expect(timeline!.steps.map((x) => [x.state, x.attempt])).toEqual([
      ["pending", 0],
      ["running", 1],
      ["pending", 1],
      ["running", 2],
      ["completed", 2],
    ]);
    // Both attempts' ends name the handler Worker's version: its version metadata binding's id (runtime/code-version.ts).
    const version = (await row(stub, id)).code_version;
    expect(version).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(timeline!.steps.filter((x) => x.version !== undefined).map((x) => [x.state, x.version])).toEqual([
      ["pending", version],
      ["completed", version],
    ]);
  });

  it("a job enqueued while a retry of its type is held still goes straight to its handler", async () => {
    const { home, stub } = await knowing();
    await heldRetry(stub, home);
    const out = await scopeRpc(stub).enqueue([newJob(home, { type: "demo.flaky", payload: JSON.stringify({ failTimes: 0 }) })]);
    if (!out.ok) throw new Error(out.message);
    expect(out.results[0]!.job!.state).toBe("running");
  });

  it("a new instance gives held retries back to the claim index, and they run at their time", async () => {
    const { home, stub, clock } = await knowing();
    const id = await heldRetry(stub, home);
    const runAt = (await row(stub, id)).run_at;
    const cold = await restartCold(env.SCOPE, stub);
    await useClock(cold, clock);
    // Its start gave it back, and cleared the mark: one scan per instance that follows one that held.
    expect(await row(cold, id)).toMatchObject({ state: "pending", held: 0, run_at: runAt });
    expect(await count(cold, INDEXED)).toBe(1);
    expect(await count(cold, MARKED)).toBe(0);
    expect(await alarmAt(cold)).toBe(runAt);
    clock.set(runAt);
    await runDurableObjectAlarm(cold);
    await vi.waitFor(async () => expect((await row(cold, id)).state).toBe("completed"), { timeout: 10_000, interval: 10 });
    expect((await row(cold, id)).attempts).toBe(2);
  });

  it("a cancelled held retry leaves the hold and memory; retried by hand, it is claimable again", async () => {
    const { home, stub } = await knowing();
    const id = await heldRetry(stub, home, { failTimes: 5 });
    const runAt = (await row(stub, id)).run_at;
    // The cancel itself, read before its report pays anything: what the hold owed was paid before the cancel counted
    // its own move, so pending never reads below what the index holds.
    const pending = await runInDurableObject(stub, (o: ScopeDO) => {
      const out = cancelJob(o.store, id, "test", o.clock.now());
      if (!out.ok) throw new Error(out.code);
      o.store.pushed.note([out.row]);
      return o.store.sql.exec<{ n: number }>("SELECT pending AS n FROM type_count WHERE type = 'demo.flaky'").one().n;
    });
    expect(pending).toBe(0);
    expect(await row(stub, id)).toMatchObject({ state: "cancelled", held: 0 });
    expect(await runInDurableObject(stub, (o: ScopeDO) => o.store.pushed.held.size)).toBe(0);
    // Nothing held: no alarm for its time.
    expect(await alarmAt(stub)).not.toBe(runAt);
    const retried = await stub.retry(id);
    expect(retried.ok).toBe(true);
    // Its attempts start again (a manual retry), and it runs: its first attempt fails again, and is held again.
    await vi.waitFor(
      async () =>
        expect((await stub.timeline(id, 50))!.steps.slice(-3).map((x) => [x.state, x.attempt, x.note])).toEqual([
          ["pending", 0, "manual retry"],
          ["running", 1, null],
          ["pending", 1, "flaky: failing attempt 1 of the first 5"],
        ]),
      { timeout: 10_000, interval: 10 },
    );
    await vi.waitFor(async () => expect(await row(stub, id)).toMatchObject({ state: "pending", held: 1, attempts: 1 }), { timeout: 10_000, interval: 10 });
  });

  it("a held retry that comes due behind due jobs of its type in the index goes back to it, and the claim takes them in order", async () => {
    const { home, stub, clock } = await knowing();
    const id = await heldRetry(stub, home);
    const runAt = (await row(stub, id)).run_at;
    // A delayed job of the type, due before the held retry: in the claim index.
    const out = await scopeRpc(stub).enqueue([newJob(home, { type: "demo.flaky", payload: JSON.stringify({ failTimes: 0 }), delayMs: runAt - clock.now() - 1 })]);
    if (!out.ok) throw new Error(out.message);
    const other = out.results[0]!.id!;
    expect(await count(stub, INDEXED)).toBe(1);
    clock.set(runAt);
    // The claim's first part: nothing restarted ahead of the due job, the held row given back to the index.
    const first = await runInDurableObject(stub, (o: ScopeDO) => {
      const left: string[] = [];
      const restarted = o.store.atomic(() => restartDue(o.store, "demo.flaky", 10, 30_000, runAt, left));
      for (const x of left) o.store.pushed.held.forget(x);
      // Both in the index now, and counted so: what the hold owed was paid as it went back (count-debt.ts).
      const pending = o.store.sql.exec<{ n: number }>("SELECT pending AS n FROM type_count WHERE type = 'demo.flaky'").one().n;
      return { restarted: restarted.length, left, pending };
    });
    expect(first).toEqual({ restarted: 0, left: [id], pending: 2 });
    expect(await count(stub, INDEXED)).toBe(2);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect([(await row(stub, id)).state, (await row(stub, other)).state]).toEqual(["completed", "completed"]), { timeout: 10_000, interval: 10 });
    expect(await row(stub, id)).toMatchObject({ attempts: 2, held: 0 });
    expect(await runInDurableObject(stub, (o: ScopeDO) => o.store.pushed.held.size)).toBe(0);
  });
  it("only a retry due within a minute is held (an idle object may be evicted sooner), and the mark keeps the lowest seq held", async () => {
    const { home, stub } = await knowing();
    const got = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = o.clock.now();
      const out = enqueueJobs(o.store, [newJob(home, { type: "demo.noop" }), newJob(home, { type: "demo.noop" }), newJob(home, { type: "demo.noop" })], now, { straight: true });
      if (!out.ok) throw new Error(out.message);
      const [a, b, c] = out.results.map((r) => r.row as JobRow);
      const end = (runAt: number) => ({ to: "pending" as const, runAt, attempts: 1, error: "x" });
      const mark = () => Number(o.store.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'held_retries'").one().value);
      const hold = (r: JobRow, runAt: number) => o.store.atomic(() => applyAttemptEnd(o.store, r, end(runAt), now))!.held;
      const held = [hold(b!, now + 1_000)];
      const marks = [mark()];
      held.push(hold(a!, now + 1_000), hold(c!, now + HELD_WAIT_MAX_MS + 1));
      marks.push(mark());
      // Given back as a new instance would (it runs this at its start), from the lowest seq held.
      return { held, marks, seqs: [a!.seq, b!.seq], released: releaseHeld(o.store.sql), after: o.store.sql.exec("SELECT count(*) AS n FROM job WHERE held = 1").one().n };
    });
    expect(got.held).toEqual([1, 1, 0]);
    expect(got.marks).toEqual([got.seqs[1], got.seqs[0]]);
    expect(got).toMatchObject({ released: 2, after: 0 });
  });
  it("a held end's timeline entry is kept in the row up to HISTORY_ROW_MAX, then in job_transition; the timeline reads both in order, notes and versions where they were given", async () => {
    const { home, stub } = await knowing();
    const got = await runInDurableObject(stub, (o: ScopeDO) => {
      const now = o.clock.now();
      const out = enqueueJobs(o.store, [newJob(home, { type: "demo.noop", maxAttempts: 100 })], now, { straight: true });
      if (!out.ok) throw new Error(out.message);
      let r = out.results[0]!.row as JobRow;
      // Each round: the attempt ends back in pending (held, or past the row's room into the table), then runs again.
      for (let i = 1; i <= HISTORY_ROW_MAX + 2; i++) {
        const at = now + i * 10;
        const end = { to: "pending" as const, runAt: at + 1_000, attempts: r.attempts, error: `error ${i}`, version: `v${i}`, ...(i % 2 ? { note: `note ${i}` } : {}) };
        o.store.atomic(() => applyAttemptEnd(o.store, r, end, at));
        r = o.store.atomic(() => restartHeld(o.store, r.seq, at + 1, 30_000, `t${i}`, PUSH_WORKER))[0] ?? r;
        if (r.state !== "running") {
          // Past the row's room the end is still held, and restarts alike; a row not held is leased as a claim would.
          o.store.sql.exec("UPDATE job SET state = 'running', lease_token = ?2, lease_owner = ?3, lease_kept = 0, lease_expires_at = ?4 WHERE seq = ?1", r.seq, `t${i}`, PUSH_WORKER, at + 30_000);
          r = o.store.sql.exec<JobRow>("SELECT * FROM job WHERE seq = ?", r.seq).one();
        }
      }
      return {
        inRow: o.store.sql.exec<{ n: number }>("SELECT json_array_length(history) AS n FROM job WHERE seq = ?", r.seq).one().n,
        inTable: o.store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job_transition WHERE job_seq = ?", r.seq).one().n,
        timeline: jobTimeline(o.store.sql, r.id, 100)!,
      };
    });
    expect(got).toMatchObject({ inRow: HISTORY_ROW_MAX, inTable: 2 });
    const ends = got.timeline.steps.filter((x) => x.state === "pending" && x.attempt > 0);
    expect(ends.map((x) => x.note)).toEqual(Array.from({ length: HISTORY_ROW_MAX + 2 }, (_, k) => (k % 2 ? `error ${k + 1}` : `note ${k + 1}`)));
    expect(ends.map((x) => x.at)).toEqual([...ends.map((x) => x.at)].sort((a, b) => a - b));
    // Each end names the code version that ran its attempt, from the row's entries and the table's rows alike.
    expect(ends.map((x) => x.version)).toEqual(Array.from({ length: HISTORY_ROW_MAX + 2 }, (_, k) => `v${k + 1}`));
    expect(got.timeline.earlier).toBe(0);
  });
});
