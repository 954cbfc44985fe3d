/**
 * Completions: what the worker's completed attempts send, together. Those of
 * one moment go in one request, answered per job — one call and one queue
 * transaction, not one of each per job. When the claim loop is waiting for a
 * free slot, their slots are given back at once and the loop's next claim
 * carries them (POST /v1/claim `complete`): a busy worker's cycle is one
 * request, not a complete and a claim. Otherwise they go alone
 * (POST /v1/jobs/complete). (docs/pull-workers.md "Pull workers", One call for
 * what finishes together.)
 *
 * @module
 */
import type { JobOutcome } from "../job/handler-contract";
import type { CompleteManyResult, LeasedJob } from "../job/schemas";
import type { Call } from "./api";

/** What a completion is for: an attempt and its lease. */
export interface Completing {
  readonly job: LeasedJob;
  readonly live: boolean;
  lost(): void;
}

export interface Completion<A extends Completing = Completing> {
  a: A;
  result: object | undefined;
  /** The attempt's ctx.log lines, kept with the job when the completion lands. */
  logs: JobOutcome["logs"];
  /** Called once the completion is answered, or dropped. */
  resolve: () => void;
}

export type CompletionAnswer = CompleteManyResult["results"][number];

export type CompletionItem = { id: string; leaseToken: string; result?: object; logs?: unknown[]; version?: string };

export interface CompletionsDeps<A extends Completing> {
  call: Call;
  log: (line: Record<string, unknown>) => void;
  /** The claim loop is waiting for a free slot, and not stopping: its next claim can carry these. */
  loopWaiting: () => boolean;
  /** These completions now ride with the next claim: give their slots back and wake the loop. */
  handedOver: (sent: Completion<A>[]) => void;
  /** The worker's code version (WorkerOptions `version`), sent with each completion. */
  version?: string;
}

export class Completions<A extends Completing> {
  private gathering: Completion<A>[] = [];
  /** Handed to the loop's next claim. */
  private carried: Completion<A>[] = [];

  constructor(private readonly deps: CompletionsDeps<A>) {}

  /** soon: `a` completed; resolves once the queue answered its completion (or it was dropped). */
  soon(a: A, result: object | undefined, logs: JobOutcome["logs"]): Promise<void> {
    if (!a.live) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.gathering.push({ a, result, logs, resolve }) === 1) setTimeout(() => void this.flush(), 0);
    });
  }

  /** take: what the next claim carries (the loop's). */
  take(): Completion<A>[] {
    const out = this.carried;
    this.carried = [];
    return out;
  }

  /** items: the completions as a request carries them (POST /v1/jobs/complete `items`, POST /v1/claim `complete`). */
  items(live: Completion<A>[]): CompletionItem[] {
    const version = this.deps.version;
    return live.map((q) => ({
      id: q.a.job.id,
      leaseToken: q.a.job.leaseToken,
      ...(q.result ? { result: q.result } : {}),
      ...(q.logs?.length ? { logs: q.logs } : {}),
      ...(version !== undefined ? { version } : {}),
    }));
  }

  /** answer: the queue's answer per completion, in order; one it refused as over deposes its attempt. */
  answer(live: Completion<A>[], results: CompletionAnswer[]): void {
    results.forEach((a, i) => {
      if (a.ok) return;
      if (a.error?.code === "lease_lost" || a.error?.code === "already_terminal") live[i]!.a.lost();
      else this.deps.log({ event: "worker:write_failed", id: a.id, path: "complete", error: a.error?.message });
    });
  }

  /** send: these go alone (POST /v1/jobs/complete), those still under their lease; each is resolved after. */
  async send(sent: Completion<A>[]): Promise<void> {
    const live = sent.filter((q) => q.a.live);
    try {
      if (live.length > 0) await this.post(live);
    } finally {
      for (const q of sent) q.resolve();
    }
  }

  private async flush(): Promise<void> {
    const sent = this.gathering;
    this.gathering = [];
    if (this.deps.loopWaiting()) {
      this.carried.push(...sent);
      this.deps.handedOver(sent);
      return;
    }
    await this.send(sent);
  }

  private async post(live: Completion<A>[]): Promise<void> {
    try {
      const { results } = await this.deps.call<{ results: CompletionAnswer[] }>("POST", "/v1/jobs/complete", { items: this.items(live) });
      this.answer(live, results);
    } catch (e) {
      for (const q of live) this.deps.log({ event: "worker:write_failed", id: q.a.job.id, path: "complete", error: String(e) });
    }
  }
}
