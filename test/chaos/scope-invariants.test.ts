/**
 * Randomized runs against one real scope object: enqueue, claim, complete
 * (with good and stale tokens), fail, heartbeat, cancel, retry, pause and resume one job, time passing,
 * alarms (on time, late, early and twice), evictions and restarts whose
 * first event is the alarm (the instance is not told its name), in random
 * order. After every step the invariants (docs/state-machine.md, README
 * "Guarantees and limits") are checked from SQLite, and the catalog must hold
 * what the object holds.
 */
import { allCounts } from "../../src/scope/jobs/counts";
import { scopeRpc } from "../helpers/scope";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock";
import type { JobRow } from "../../src/scope/jobs/job-row";
import type { ScopeDO } from "../../src/scope/scope-do";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { catalogOf, env, freshScope, newJob, partsOf, restartCold, T0, useClock, type ScopeStub, put } from "../helpers/scope";
import { chaosSeeds, int, pick, seeded } from "../helpers/random";

const SEEDS = chaosSeeds([1, 2, 3, 4], 1000);
const STEPS = 120;

interface Model {
  attempts: Map<string, number>;
  completions: Map<string, number>;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function snapshot(stub: ScopeStub) {
  return runInDurableObject(stub, async (_o: ScopeDO, state) => {
    const sql = state.storage.sql;
    return {
      rows: sql.exec<JobRow>("SELECT * FROM job ORDER BY seq").toArray(),
      // Every count that is not zero (a negative one too), as the grouped rows below are ordered.
      counts: allCounts(sql)
        .map((c) => ({ ...c }))
        .sort((a, b) => cmp(a.type, b.type) || cmp(a.state, b.state) || cmp(a.failure_kind, b.failure_kind)),
      grouped: sql
        .exec<{ type: string; state: string; failure_kind: string; n: number }>(
          "SELECT type, state, coalesce(failure_kind, '') AS failure_kind, count(*) AS n FROM job GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        )
        .toArray(),
      alarm: await state.storage.getAlarm(),
    };
  });
}

/**
 * The earliest moment the object must wake for its jobs, computed independently from the rows. Completed jobs' sweep
 * is the retention capability's to time (expectedWake leaves them out: see checkInvariants).
 */
function expectedWake(rows: JobRow[], now: number): number | null {
  const DAY = 86_400_000;
  const times: number[] = [];
  for (const r of rows) {
    if (r.state === "pending" && r.run_at > now) times.push(r.run_at);
    if (r.state === "running") times.push(r.lease_expires_at!);
    if (r.finished_at !== null) times.push(r.finished_at + (r.state === "failed" ? 7 * DAY : DAY));
  }
  return times.length ? Math.min(...times) : null;
}

/** The catalog's view of one home, per type: what it would answer stats and claims with. */
async function catalogView(home: string) {
  return runInDurableObject(catalogOf(home), (_o: CatalogDO, state) =>
    state.storage.sql
      .exec<{ type: string; pending: number; running: number; completed: number }>(
        "SELECT type, pending + scheduled AS pending, running, completed FROM home_type WHERE home = ? AND pending + scheduled + running + completed > 0 ORDER BY type",
        home,
      )
      .toArray(),
  );
}

async function checkInvariants(stub: ScopeStub, home: string, clock: ManualClock, model: Model, where: string) {
  const before = await snapshot(stub);
  const now = clock.now();
  const want = expectedWake(before.rows, now);
  // Invariant 4, as it stands at any moment (a catalog report may be in flight and ask for an earlier wake).
  if (want !== null) {
    expect(before.alarm, `${where}: alarm armed`).not.toBeNull();
    expect(before.alarm!, `${where}: alarm at or before the earliest due/expiry/sweep`).toBeLessThanOrEqual(want);
  }
  // Once the catalog has everything and the alarm is recomputed, it is exactly the earliest wake, or deleted — but the
  // sweep of completed jobs, which have no index by finish time (scope/retention/completed-sweep.ts), may come early,
  // never late: an instance that starts with completed jobs it never saw finish sweeps at once, and a walk leaves the
  // next time as the earliest it can tell. So the alarm is the earliest of the other deadlines and the sweep's own
  // time, and that time is no later than the first completed job's.
  await stub.flushCatalog();
  const after = await snapshot(stub);
  const completed = after.rows.filter((r) => r.state === "completed");
  const others = expectedWake(after.rows.filter((r) => r.state !== "completed"), now);
  const sweep = await runInDurableObject(stub, (o: ScopeDO) => {
    const parts = partsOf(o);
    return parts.capabilities.find((c) => c.name === "retention")!.nextWake!(parts.readWake(now), now);
  });
  const firstCompleted = completed.length > 0 ? Math.min(...completed.map((r) => r.finished_at! + 86_400_000)) : null;
  if (firstCompleted !== null) expect(sweep, `${where}: the completed sweep no later than the first completed job's retention`).toBeLessThanOrEqual(firstCompleted);
  const soonest = [others, sweep].filter((t): t is number => t !== null);
  expect(after.alarm, `${where}: alarm after flush`).toBe(soonest.length > 0 ? Math.min(...soonest) : null);

  // The catalog holds what the object holds, once flushed (a cold-woken object that lost its name could not tell it).
  const held = new Map<string, { type: string; pending: number; running: number; completed: number }>();
  for (const r of after.rows) {
    const t = held.get(r.type) ?? { type: r.type, pending: 0, running: 0, completed: 0 };
    if (r.state === "pending" || r.state === "running" || r.state === "completed") t[r.state]++;
    held.set(r.type, t);
  }
  const told = [...held.values()].filter((t) => t.pending + t.running + t.completed > 0).sort((a, b) => a.type.localeCompare(b.type));
  expect(await catalogView(home), `${where}: catalog`).toEqual(told);

  // Counts kept by triggers and tallies equal the rows.
  expect(after.counts, `${where}: type_count`).toEqual(after.grouped);
  for (const r of after.rows) {
    // Invariants 2, 3: one state; running iff leased.
    expect(r.state === "running", `${where}: ${r.id} lease`).toBe(r.lease_token !== null && r.lease_expires_at !== null);
    // A pause asked is a running job's; a paused job holds nothing and waits for its resume alone (never due).
    if (r.pause_asked !== null) expect(r.state, `${where}: ${r.id} pause asked`).toBe("running");
    if (r.state === "waiting") expect(r.run_at, `${where}: ${r.id} paused`).toBe(8_640_000_000_000_000);
    // Invariant 5: attempts counted once per claim, as the model counted them.
    expect(r.attempts, `${where}: ${r.id} attempts`).toBe(model.attempts.get(r.id) ?? 0);
    expect(r.attempts).toBeLessThanOrEqual(r.max_attempts);
    // No job completed twice.
    expect(model.completions.get(r.id) ?? 0, `${where}: ${r.id} completions`).toBeLessThanOrEqual(1);
  }
}

describe("scope object invariants under random operations", () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}`, async () => {
      const rand = seeded(seed);
      const clock = new ManualClock(T0);
      const { home, stub: named } = await freshScope(clock);
      let stub = named;
      await useClock(stub, clock, rand);
      const model: Model = { attempts: new Map(), completions: new Map() };
      const leases = new Map<string, string>(); // id -> last token we were given
      let evictions = 0;

      for (let step = 0; step < STEPS; step++) {
        const snap = (await snapshot(stub)).rows;
        const running = snap.filter((r) => r.state === "running");
        const terminal = snap.filter((r) => r.state === "failed" || r.state === "cancelled");
        const live = snap.filter((r) => r.state === "pending" || r.state === "running");
        const paused = snap.filter((r) => r.pause_asked === 1 || (r.wait ?? "").includes('"kind":"pause"'));
        const op = int(rand, 0, 15);
        let what = "";
        switch (op) {
          case 0:
          case 1: {
            const n = int(rand, 1, 3);
            const jobs = Array.from({ length: n }, () =>
              newJob(home, {
                delayMs: rand() < 0.5 ? 0 : int(rand, 1, 5000),
                maxAttempts: int(rand, 1, 3),
                timeoutMs: rand() < 0.2 ? int(rand, 1000, 4000) : null,
                dedupeKey: rand() < 0.2 ? `k${int(rand, 0, 2)}` : null,
                priority: int(rand, 0, 2),
              }),
            );
            await put(stub, jobs);
            what = `enqueue ${n}`;
            break;
          }
          case 2:
          case 3: {
            const claimed = await scopeRpc(stub).claim({ worker: "w", types: null, limit: int(rand, 1, 3), leaseMs: int(rand, 1000, 10_000) });
            for (const c of claimed) {
              model.attempts.set(c.id, (model.attempts.get(c.id) ?? 0) + 1);
              leases.set(c.id, c.leaseToken!);
            }
            what = `claim ${claimed.length}`;
            break;
          }
          case 4: {
            const r = pick(rand, running);
            if (!r) break;
            const stale = rand() < 0.3;
            const out = await scopeRpc(stub).complete(r.id, stale ? "f".repeat(32) : r.lease_token!, null);
            if (out.ok) model.completions.set(r.id, (model.completions.get(r.id) ?? 0) + 1);
            if (stale) expect(out.ok).toBe(false);
            what = `complete ${stale ? "stale" : "ok"}`;
            break;
          }
          case 5: {
            const r = pick(rand, running);
            if (!r) break;
            const consumes = rand() < 0.8;
            const out = await scopeRpc(stub).fail(r.id, r.lease_token!, { error: "e", fatal: rand() < 0.1, consumesAttempt: consumes });
            // Given back: pending again, or paused (waiting) if it was asked to pause.
            if (out.ok && (out.job.state === "pending" || out.job.state === "waiting") && !consumes) model.attempts.set(r.id, Math.max(0, model.attempts.get(r.id)! - 1));
            what = "fail";
            break;
          }
          case 6: {
            // An old token from an earlier lease of a job that was reclaimed must change nothing.
            const [id, token] = pick(rand, [...leases]) ?? [];
            if (!id) break;
            const current = snap.find((r) => r.id === id);
            const out = await scopeRpc(stub).heartbeat(id, token!, null);
            if (!current || current.lease_token !== token || current.lease_expires_at! <= clock.now()) expect(out.ok).toBe(false);
            what = "heartbeat";
            break;
          }
          case 7: {
            const r = pick(rand, live);
            if (r) await scopeRpc(stub).cancel(r.id, "chaos");
            what = "cancel";
            break;
          }
          case 8: {
            const r = pick(rand, terminal);
            if (!r) break;
            const out = await scopeRpc(stub).retry(r.id);
            if (out.ok) model.attempts.set(r.id, 0);
            what = "retry";
            break;
          }
          case 9:
          case 10: {
            clock.advance(int(rand, 0, 6000));
            what = "time passes";
            break;
          }
          case 11: {
            // The platform delivers alarms at their time, late, early or twice; each must be harmless.
            await runDurableObjectAlarm(stub);
            if (rand() < 0.3) await runDurableObjectAlarm(stub);
            what = "alarm";
            break;
          }
          case 12: {
            if (evictions < 3) {
              await evictDurableObject(stub);
              await useClock(stub, clock, rand);
              evictions++;
            }
            what = "evict";
            break;
          }
          case 13: {
            // A restart whose first event is the alarm: the instance is not told its name, and later named calls reach that same instance.
            if (evictions < 3) {
              stub = await restartCold(env.SCOPE, stub);
              await useClock(stub, clock, rand);
              await runDurableObjectAlarm(stub);
              evictions++;
            }
            what = "restart, woken cold by the alarm";
            break;
          }
          case 14: {
            // One job paused: a pending one at once, a running one asked (it pauses where its attempt would go back to pending).
            const r = pick(rand, [...live, ...snap.filter((x) => x.state === "waiting")]);
            if (!r) break;
            const out = await scopeRpc(stub).pause(r.id);
            expect(out.ok, `pause ${r.state}`).toBe(true);
            what = `pause ${r.state}`;
            break;
          }
          case 15: {
            const r = pick(rand, paused);
            if (!r) break;
            const out = await scopeRpc(stub).resume(r.id);
            expect(out.ok, `resume ${r.state}`).toBe(true);
            what = `resume ${r.state}`;
            break;
          }
        }
        await checkInvariants(stub, home, clock, model, `seed ${seed} step ${step} (${what})`);
      }
    });
  }
});
