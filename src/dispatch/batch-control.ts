/**
 * BatchControl: the scope object's side of the abort channel of one handler
 * call (see job/handler-contract.ts). `abort()` queues a notice; the handler's pending
 * `next()` receives it; `settle()` brings a finished job back early. `close()`
 * ends the channel when the call returns.
 *
 * @module
 */
import { RpcTarget } from "cloudflare:workers";
import { progressJsonError } from "../job/progress";
import type { AbortNotice, AbortReason, BatchControlApi, JobOutcome, JournalAnswer, JournalWrite, ProgressReport } from "../job/handler-contract";

export class BatchControl extends RpcTarget implements BatchControlApi {
  private readonly queued: AbortNotice[] = [];

  /** `onSettle` receives each early outcome the handler reports; `onJournal` writes a durable step (scope/workflow/steps.ts). */
  constructor(
    private readonly onSettle: (outcome: unknown) => void,
    private readonly onJournal: (writes: JournalWrite[]) => JournalAnswer[] | Promise<JournalAnswer[]> = (w) => w.map(() => ({ ok: false, code: "lease_lost", message: "no journal here" })),
    /** Keeps the jobs' progress reports (scope/watching/progress.ts); the values were checked by the SDK and again here. */
    private readonly onProgress: (items: ProgressReport[]) => Promise<void> = async () => {},
  ) {
    super();
  }

  async journal(writes: JournalWrite[]): Promise<JournalAnswer[]> {
    this.reached = true;
    if (this.closed) return writes.map(() => ({ ok: false, code: "lease_lost", message: "the batch is over: this attempt no longer holds the job" }));
    return this.onJournal(writes);
  }

  async progress(items: ProgressReport[]): Promise<void> {
    this.reached = true;
    if (this.closed || !Array.isArray(items)) return;
    // The handler's side is another Worker's code: only well-formed reports are kept (job/progress.ts).
    const good = items.filter((i) => typeof i?.id === "string" && typeof i.value === "string" && progressJsonError(i.value) === null);
    if (good.length > 0) await this.onProgress(good);
  }

  /** The handler has called in: the batch reached its code (the SDK calls next() first; reachability.ts). */
  reached = false;

  async settle(outcome: JobOutcome): Promise<void> {
    this.reached = true;
    if (!this.closed) this.onSettle(outcome);
  }

  private waiting: ((n: AbortNotice | null) => void) | null = null;
  private closed = false;

  next(): Promise<AbortNotice | null> {
    this.reached = true;
    const queued = this.queued.shift();
    if (queued || this.closed) return Promise.resolve(queued ?? null);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  abort(id: string, reason: AbortReason): void {
    if (this.closed) return;
    const notice = { id, reason };
    if (this.waiting) {
      this.waiting(notice);
      this.waiting = null;
    } else this.queued.push(notice);
  }

  close(): void {
    this.closed = true;
    this.waiting?.(null);
    this.waiting = null;
  }
}
