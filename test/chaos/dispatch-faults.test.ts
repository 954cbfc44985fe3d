/**
 * Randomized fault runs against the real runtime (seeded): pushed jobs whose
 * handlers complete, throw, fail for good, hang past their timeout or ignore
 * their signal; scope, pool and catalog objects reset mid-dispatch; duplicate
 * enqueue storms. After each run, the invariants of DESIGN.md §3 hold: every
 * job ends in exactly one terminal state, none completes twice, attempts are
 * counted once per start, no pool slot leaks.
 */
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { homeOfJobId } from "../../src/job/home";
import { api, isTerminal, waitForJob } from "../helpers/api";
import { env } from "../helpers/scope";
import { probe } from "../helpers/probe";
import { chaosSeeds, int, pick, seeded } from "../helpers/random";

const SEEDS = chaosSeeds([101, 202], 1000);
const JOBS = 24;
const PLANS = [["complete"], ["throw", "complete"], ["throw", "throw", "throw"], ["fatal"], ["hang", "complete"], ["deaf"], ["throw", "hang", "complete"]];

describe("push dispatch under faults (randomized)", () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}`, async () => {
      const rand = seeded(seed);
      const key = `chaos-${seed}-${crypto.randomUUID().slice(0, 6)}`;
      const jobs = Array.from({ length: JOBS }, (_, i) => ({
        type: rand() < 0.5 ? "chaos.job" : "chaos.limited",
        payload: { plan: pick(rand, PLANS)!, ms: int(rand, 5, 40) },
        scope: { type: "Chaos", id: `${key}-${i % 4}` },
        id: `${key}-${i}`,
      }));
      // A duplicate storm: every job enqueued three times at once, by id and in batches.
      const storms = await Promise.all([
        api("POST", "/v1/jobs/batch", { jobs }),
        api("POST", "/v1/jobs/batch", { jobs }),
        ...jobs.slice(0, 8).map((j) => api("POST", "/v1/jobs", j)),
      ]);
      for (const s of storms) expect(s.status, JSON.stringify(s.body).slice(0, 500)).toBeLessThan(300);
      const ids: string[] = storms[0]!.body.results.map((r: any) => r.id);
      expect(new Set(storms[1]!.body.results.map((r: any) => r.id))).toEqual(new Set(ids));
      const created = [storms[0]!, storms[1]!].flatMap((s) => s.body.results.filter((r: any) => r.created)).length + storms.slice(2).filter((s) => s.status === 201).length;
      expect(created, "each job created exactly once across the storm").toBe(JOBS);

      // Objects reset mid-dispatch, twice, at random moments.
      for (let k = 0; k < 2; k++) {
        await new Promise((r) => setTimeout(r, int(rand, 20, 400)));
        await abortAllDurableObjects();
      }

      const finals = await Promise.all(ids.map((id) => waitForJob(id, isTerminal, 45_000)));
      for (const [i, job] of finals.entries()) {
        const plan: string[] = jobs[i]!.payload.plan;
        expect(["completed", "failed"], `${job.id}: ${job.state}`).toContain(job.state);
        expect(job.attempts).toBeGreaterThanOrEqual(1);
        expect(job.attempts).toBeLessThanOrEqual(job.maxAttempts);
        if (job.state === "failed") expect(["retries_exhausted", "fatal", "timeout", "stalled"]).toContain(job.failureKind);
        if (plan[0] === "fatal" && job.attempts === 1) expect(job.failureKind).toBe("fatal");
      }

      // Lifecycle events as the observer saw them (best effort: a reset can drop a batch on its way, never invent one):
      // one completion at most, never more starts than counted attempts, one start per attempt number.
      await Promise.all([...new Set(ids.map((id) => homeOfJobId(id)!.name))].map((h) => env.SCOPE.getByName(h).drain()));
      for (const job of finals) {
        const events = await probe.events(job.id);
        expect(events.filter((e) => e.event === "job:completed").length, job.id).toBeLessThanOrEqual(1);
        const starts = events.filter((e) => e.event === "job:started");
        // A reset releases the attempts it orphaned, uncounted (the timeline says so): each may have started once more.
        const timeline = (await api("GET", `/v1/jobs/${job.id}/timeline?limit=1000`)).body.steps as { note: string | null }[];
        const released = timeline.filter((s) => s.note?.startsWith("released: ")).length;
        // A reset can lose a start event that was on its way (the attempt still counts): never more starts than attempts and releases.
        expect(starts.length, `${job.id} starts vs attempts`).toBeLessThanOrEqual(job.attempts + released);
        const perAttempt = new Map<number, number>();
        for (const e of starts) perAttempt.set(e.attempt, (perAttempt.get(e.attempt) ?? 0) + 1);
        for (const [attempt, n] of perAttempt) expect(n, `${job.id} starts of attempt ${attempt}`).toBeLessThanOrEqual(1 + released);
      }

      // No pool slot leaks: once every job is over, the pool is empty (permits of reset holders lapse within 2 leases).
      await vi.waitFor(
        async () => {
          const pool = (await api("GET", "/v1/pools")).body.pools.find((p: any) => p.name === "type:chaos.limited");
          if (pool.active !== 0) throw new Error(`${pool.active} units still held`);
        },
        { timeout: 10_000, interval: 100 },
      );
    }, 90_000);
  }
});
