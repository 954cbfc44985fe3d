/**
 * The claim loop: while the worker is not stopping, claim as many jobs as it
 * has free slots (waiting on the queue for due work, not polling), run them,
 * and wait for a slot when all are taken. A failed claim backs off (100 ms
 * doubling to 5 s); a refusal no retry can change (a wrong token or URL,
 * pull-worker/answers.ts) ends the loop with it. Jobs a claim brings after stop()
 * was called go back unstarted (docs/pull-workers.md "Pull workers").
 *
 * @module
 */
import type { LeasedJob } from "../job/schemas";
import type { Claimed } from "./claims";

export const BACKOFF_MIN_MS = 100;
export const BACKOFF_MAX_MS = 5_000;

export interface ClaimLoopDeps {
  claim(limit: number, waitMs: number): Promise<Claimed>;
  waitMs: number;
  /** Free slots now, and a promise that resolves when one frees (or the worker is stopping). */
  slots: { readonly free: number; untilFree(): Promise<void> };
  /** `group`: the claim's answer, the same for each of its jobs (a batch handler runs them together: runtime/batch.ts). */
  run(job: LeasedJob, sentAt: number, group: object): void;
  /** Give a leased job back unstarted: pending, due now, its attempt not counted. */
  release(job: LeasedJob): Promise<void>;
  stopping(): boolean;
  /** A refusal no retry can change, as the Error start() rejects with; null: worth retrying. */
  refusedForGood(e: unknown): Error | null;
  log: (line: Record<string, unknown>) => void;
}

/** claimLoop: runs until the worker stops; resolves with the refusal that ended it, if one did. */
export async function claimLoop(deps: ClaimLoopDeps): Promise<Error | null> {
  let backoff = BACKOFF_MIN_MS;
  while (!deps.stopping()) {
    const free = deps.slots.free;
    if (free <= 0) {
      await deps.slots.untilFree();
      continue;
    }
    let claimed: Claimed;
    try {
      claimed = await deps.claim(free, deps.waitMs);
      backoff = BACKOFF_MIN_MS;
    } catch (e) {
      if (deps.stopping()) break;
      const refusal = deps.refusedForGood(e);
      if (refusal) {
        deps.log({ event: "worker:stopped", error: refusal.message });
        return refusal;
      }
      deps.log({ event: "worker:claim_failed", error: String(e), retryInMs: backoff });
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      continue;
    }
    if (deps.stopping()) {
      // Leased after stop() was called (a claim carrying completions is let land; a waiting one the queue had begun
      // to answer is read to its end): its jobs go back unstarted, their attempts not counted.
      await Promise.all(claimed.jobs.map((job) => deps.release(job)));
      break;
    }
    for (const [i, job] of claimed.jobs.entries()) deps.run(job, claimed.since[i]!, claimed.jobs);
  }
  return null;
}
