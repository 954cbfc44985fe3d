/**
 * The batches capability (capability.ts): a scope object's side of batches
 * over several objects (batch-stage.ts has the protocol) — its part staged,
 * committed, dropped, decided — or, when no word came, settled by its alarm
 * with the decider's answer.
 *
 * @module
 */
import { nothing, type Changes } from "../jobs/changes";
import { commitDeciding, decide, partAsItIs, stage, staged, STAGE_ASK_MS, STAGE_TIMEOUT_MS, take, type Decision, type DecidingAnswer, type Publication } from "./batch-stage";
import { checkEnqueue, enqueueJobs, type EnqueueOutcome, type EnqueueRefusal, type NewJob } from "../jobs/enqueue";
import type { WorkflowStore } from "../workflow/workflow-store";
import { enqueuedChanges } from "../jobs/job-writes";
import type { AlarmPass, Capability } from "../jobs/capability";

export interface BatchPartDeps {
  store: WorkflowStore;
  now(): number;
  /** This object's name, or null for one woken cold that has none yet. */
  home(): string | null;
  /** The decider of a batch, when it is another object. */
  decider(name: string): { decideBatch(batch: string, proposal: Decision | null): Promise<Decision | null> };
  /** Runs what follows a write (follow-ups.ts). */
  commit(changes: Changes, now: number): Promise<void>;
}

/** After a failed ask past the stage timeout, the next one comes at most this much later. */
const STAGE_RETRY_MS = 5_000;

/** Staging only moves the alarm (its stage timeout): nothing anyone counts or claims changed. */
const STAGED: Changes = { ...nothing(), arm: true };

export class BatchPart implements Capability {
  readonly name = "batches";
  /** Some part may be staged here (unknown after a restart, so true): while false, the alarm skips the stage queries. */
  private held = true;
  /** When each staged batch next asks its decider, and the interval it doubles (lost on restart: it then asks at once). */
  private readonly asks = new Map<string, { at: number; everyMs: number }>();

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

  /** commitDeciding: the decider enqueues its own part (and takes an event, as its topic's registry) and records the decision in one transaction. */
  async commitDeciding(batch: string, jobs: NewJob[], publication?: Publication): Promise<DecidingAnswer> {
    const now = this.deps.now();
    const answer = commitDeciding(this.deps.store, batch, jobs, now, publication);
    if (answer.decision === "commit") await this.deps.commit(enqueuedChanges(this.deps.store, answer.outcome), now);
    return answer;
  }

  /** decide: the decider's side — the batch's decision, `proposal` if it is the first; null: only asked, and none yet. */
  decide(batch: string, proposal: Decision | null): Decision | null {
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

  /**
   * settleStale: each stage still here past its ask time asks its decider what was decided and does it — a
   * batch committed while its coordinator died is applied about a second after the decider's part; past the
   * stage timeout it asks for `abort` (recorded unless `commit` is there already).
   */
  async settleStale(now: number): Promise<void> {
    if (!this.held) return;
    const { store } = this.deps;
    for (const s of this.stages()) {
      const proposal: Decision | null = now >= s.stagedAt + STAGE_TIMEOUT_MS ? "abort" : null;
      if (proposal === null && now < this.askAt(s)) continue;
      try {
        const decision = s.decider === this.deps.home() ? decide(store, s.batch, proposal, now) : await this.deps.decider(s.decider).decideBatch(s.batch, proposal);
        if (decision === null) {
          // Not decided yet (a slow coordinator): ask again later, at doubling intervals, and at the timeout.
          this.later(s, now);
          continue;
        }
        console.log(JSON.stringify({ event: "batch:settled_by_alarm", home: this.deps.home(), batch: s.batch, decision }));
        if (decision === "commit") await this.apply(s.batch);
        else await this.abort(s.batch);
      } catch (e) {
        // Its decider is unreachable: this stage waits and asks again later (backing off, as when undecided, so the
        // alarm does not spin on it); the others and the rest of the pass go on.
        this.later(s, now);
        console.error(JSON.stringify({ event: "batch:settle_failed", home: this.deps.home(), batch: s.batch, decider: s.decider, error: String(e) }));
      }
    }
  }

  /** Batches staged here whose commit never came: their decider says what they became (batch-stage.ts). */
  async alarm(pass: AlarmPass): Promise<void> {
    await this.settleStale(pass.now);
  }

  nextWake(): number | null {
    return this.deadline();
  }

  /** deadline: when the next staged part must ask its decider; most objects never hold one. */
  deadline(): number | null {
    if (!this.held) return null;
    const times = this.stages().map((s) => this.askAt(s));
    this.held = times.length > 0;
    return times.length === 0 ? null : Math.min(...times);
  }

  /** stages: the batches staged here, with the asks of batches no longer here forgotten. */
  private stages(): { batch: string; decider: string; stagedAt: number }[] {
    const here = staged(this.deps.store);
    if (this.asks.size > 0) {
      const present = new Set(here.map((s) => s.batch));
      for (const b of this.asks.keys()) if (!present.has(b)) this.asks.delete(b);
    }
    return here;
  }

  /** later: the next ask at twice the last interval, never past the stage timeout — or, once past it, a retry 5 s on. */
  private later(s: { batch: string; stagedAt: number }, now: number): void {
    const everyMs = 2 * (this.asks.get(s.batch)?.everyMs ?? STAGE_ASK_MS);
    const timeout = s.stagedAt + STAGE_TIMEOUT_MS;
    this.asks.set(s.batch, { at: now >= timeout ? now + Math.min(everyMs, STAGE_RETRY_MS) : Math.min(now + everyMs, timeout), everyMs });
  }

  private askAt(s: { batch: string; stagedAt: number }): number {
    const ask = this.asks.get(s.batch)?.at;
    // Past the timeout, an abort whose decider failed to answer waits for its retry time, not the timeout again.
    return ask !== undefined ? ask : Math.min(s.stagedAt + STAGE_ASK_MS, s.stagedAt + STAGE_TIMEOUT_MS);
  }

  /** apply: a decided part's jobs enqueued, or null when nothing of `batch` is staged here. */
  private async apply(batch: string): Promise<EnqueueOutcome | null> {
    const { store } = this.deps;
    const now = this.deps.now();
    const out = store.atomic(() => {
      const jobs = take(store, batch);
      // Its jobs due now may go straight to a handler: the commit below starts their calls (scope/push/straight.ts).
      return jobs === null ? null : enqueueJobs(store, jobs, now, { decided: true, straight: true });
    });
    await this.deps.commit(out?.ok ? enqueuedChanges(store, out) : STAGED, now);
    return out;
  }
}
