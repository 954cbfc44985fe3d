/**
 * A scope object's side of batches over several objects (batch-stage.ts has
 * the protocol): its part staged, committed, dropped, decided — or, when no
 * word came, settled by its alarm with the decider's answer.
 *
 * @module
 */
import { nothing, type Changes } from "./changes";
import {
  commitDeciding,
  decide,
  nextStageDeadline,
  partAsItIs,
  stage,
  stale,
  take,
  type Decision,
  type DecidingAnswer,
} from "./batch-stage";
import { checkEnqueue, enqueueJobs, type EnqueueOutcome, type EnqueueRefusal, type NewJob } from "./enqueue";
import type { ScopeStore } from "./store";
import { enqueuedChanges } from "./writes";

export interface BatchPartDeps {
  store: ScopeStore;
  now(): number;
  /** This object's name, or null for one woken cold that has none yet. */
  home(): string | null;
  /** The decider of a batch, when it is another object. */
  decider(name: string): { decideBatch(batch: string, proposal: Decision): Promise<Decision> };
  /** Runs what follows a write (follow-ups.ts). */
  commit(changes: Changes, now: number): Promise<void>;
}

/** Staging only moves the alarm (its stage timeout): nothing anyone counts or claims changed. */
export const STAGED: Changes = { ...nothing(), arm: true };

export class BatchPart {
  /** Some part may be staged here (unknown after a restart, so true): while false, the alarm skips the stage queries. */
  private held = true;

  constructor(private readonly deps: BatchPartDeps) {}

  /** stage: checked as the enqueue would check it, then kept aside, invisible, until commit or abort. */
  async stage(batch: string, decider: string, jobs: NewJob[]): Promise<EnqueueRefusal | null> {
    const { store } = this.deps;
    const now = this.deps.now();
    // Only a key or a depth cap can refuse a job; a part with neither skips the dry run (it would enqueue and roll back all of it).
    if (jobs.some((j) => j.dedupeKey !== null || store.config.typeSettings(j.type).maxDepth !== null)) {
      const refused = checkEnqueue(store, jobs, now);
      if (refused) return refused;
    }
    stage(store, batch, decider, jobs, now);
    this.held = true;
    await this.deps.commit(STAGED, now);
    return null;
  }

  /** commitDeciding: the decider enqueues its own part and records the decision in one transaction. */
  async commitDeciding(batch: string, jobs: NewJob[]): Promise<DecidingAnswer> {
    const now = this.deps.now();
    const answer = commitDeciding(this.deps.store, batch, jobs, now);
    if (answer.decision === "commit") await this.deps.commit(enqueuedChanges(this.deps.store, answer.outcome), now);
    return answer;
  }

  /** decide: the decider's side — the batch's decision, `proposal` if it is the first. */
  decide(batch: string, proposal: Decision): Decision {
    return decide(this.deps.store, batch, proposal, this.deps.now());
  }

  /**
   * commit: the staged part becomes jobs, as an enqueue of them would make them. With nothing staged (the alarm
   * applied the part first, or a first call's answer was lost), the part's jobs are answered as they are now.
   */
  async commit(batch: string, ids: readonly string[]): Promise<EnqueueOutcome> {
    return (await this.apply(batch)) ?? partAsItIs(this.deps.store, ids);
  }

  /** abort: drop the staged part (nothing of it was ever seen). */
  async abort(batch: string): Promise<void> {
    const { store } = this.deps;
    store.atomic(() => take(store, batch));
    await this.deps.commit(STAGED, this.deps.now());
  }

  /** settleStale: ask each stale stage's decider (abort, unless it committed) and do what it says. */
  async settleStale(now: number): Promise<void> {
    if (!this.held) return;
    const { store } = this.deps;
    for (const { batch, decider } of stale(store, now)) {
      try {
        const decision = decider === this.deps.home() ? decide(store, batch, "abort", now) : await this.deps.decider(decider).decideBatch(batch, "abort");
        console.log(JSON.stringify({ event: "batch:settled_by_alarm", home: this.deps.home(), batch, decision }));
        if (decision === "commit") await this.apply(batch);
        else await this.abort(batch);
      } catch (e) {
        // Its decider is unreachable: this stage waits (the alarm asks again), the others and the rest of the pass go on.
        console.error(JSON.stringify({ event: "batch:settle_failed", home: this.deps.home(), batch, decider, error: String(e) }));
      }
    }
  }

  /** deadline: when the oldest staged part must be settled; most objects never hold one. */
  deadline(): number | null {
    if (!this.held) return null;
    const at = nextStageDeadline(this.deps.store);
    this.held = at !== null;
    return at;
  }

  /** apply: a decided part's jobs enqueued, or null when nothing of `batch` is staged here. */
  private async apply(batch: string): Promise<EnqueueOutcome | null> {
    const { store } = this.deps;
    const now = this.deps.now();
    const out = store.atomic(() => {
      const jobs = take(store, batch);
      return jobs === null ? null : enqueueJobs(store, jobs, now, true);
    });
    await this.deps.commit(out?.ok ? enqueuedChanges(store, out) : STAGED, now);
    return out;
  }
}
