/**
 * Claims: one POST /v1/claim. A claim carrying completions (pull-worker/completions.ts)
 * has them applied first and answered with it; it does not wait, and stop() cuts
 * it off only past its deadline — it answers at once, and its completions must
 * not be lost (cut off, they go again alone). A claim without any may wait
 * (`waitMs`) for due work; stop() ends that wait, unless the queue has begun to
 * answer it — then its answer is read, and the jobs it leased are the caller's to
 * give back (docs/pull-workers.md "Pull workers", Shutdown).
 *
 * @module
 */
import type { LeasedJob } from "../job/schemas";
import type { Call } from "./api";
import type { Completing, CompletionAnswer, Completions } from "./completions";

/**
 * What one claim leased and, per job, when its lease began by this machine's clock (each is kept from then;
 * runtime/lease.ts). The earliest it can have begun: the claim arrived no sooner than it was sent, and the
 * lease began `startedAt − askedAt` after it arrived, by the queue's clock — so a claim that waited for work keeps
 * the rest of its lease, and neither the claim's way there nor its answer's way back is counted as lease not yet
 * used. A queue that does not say when the claim arrived (`askedAt`, a queue of 0.1.0): the send time.
 */
export interface Claimed {
  jobs: LeasedJob[];
  since: number[];
}

/** sinceOf: each job's lease start on this machine's clock (see Claimed), within [sentAt, receivedAt]. */
export function sinceOf(jobs: readonly LeasedJob[], askedAt: number | undefined, sentAt: number, receivedAt: number): number[] {
  return jobs.map((j) => (askedAt === undefined || j.startedAt == null ? sentAt : Math.min(receivedAt, sentAt + Math.max(0, j.startedAt - askedAt))));
}

export interface ClaimsDeps<A extends Completing> {
  call: Call;
  completions: Completions<A>;
  /** The claim's fixed fields: worker, types, tags, leaseMs. */
  body: { worker: string; types: string[]; tags?: string[]; leaseMs: number };
  now?: () => number;
}

export class Claims<A extends Completing> {
  /** Ends the claim waiting for due work, unless the queue has begun to answer it. */
  private waiting: AbortController | null = null;
  /** Ends the claim on its way, whatever it is doing (past stop()'s deadline only). */
  private onItsWay: AbortController | null = null;
  private readonly now: () => number;

  constructor(private readonly deps: ClaimsDeps<A>) {
    this.now = deps.now ?? Date.now;
  }

  /** claim: up to `limit` jobs; with no completions to carry, waiting up to `waitMs` for due work. */
  async claim(limit: number, waitMs: number): Promise<Claimed> {
    const { call, completions, body } = this.deps;
    const carry = completions.take();
    const live = carry.filter((q) => q.a.live);
    const sentAt = this.now();
    this.onItsWay = new AbortController();
    const signal = this.onItsWay.signal;
    if (live.length > 0) {
      try {
        const out = await call<{ jobs: LeasedJob[]; completed?: CompletionAnswer[]; askedAt?: number }>("POST", "/v1/claim", { ...body, limit, complete: completions.items(live) }, { signal });
        completions.answer(live, out.completed ?? []);
        return { jobs: out.jobs, since: sinceOf(out.jobs, out.askedAt, sentAt, this.now()) };
      } catch (e) {
        // Whether they landed is unknown: they go again alone (a completion that landed answers already_terminal).
        await completions.send(live);
        throw e;
      } finally {
        this.onItsWay = null;
        for (const q of carry) q.resolve();
      }
    }
    for (const q of carry) q.resolve();
    this.waiting = new AbortController();
    try {
      const out = await call<{ jobs: LeasedJob[]; askedAt?: number }>("POST", "/v1/claim", { ...body, limit, ...(waitMs > 0 ? { waitMs } : {}) }, { untilAnswered: this.waiting.signal, signal });
      return { jobs: out.jobs, since: sinceOf(out.jobs, out.askedAt, sentAt, this.now()) };
    } finally {
      this.waiting = null;
      this.onItsWay = null;
    }
  }

  /** stopWaiting: stop() was called — end the claim waiting for due work, unless its answer is arriving. */
  stopWaiting(): void {
    this.waiting?.abort();
  }

  /** cutOff: stop()'s deadline passed — the claim on its way is ended, whatever it is doing (carried completions go again alone). */
  cutOff(): void {
    this.onItsWay?.abort();
  }
}
