/**
 * `ctx.progress(value)` on the handler's side (docs/handlers.md "Progress"): the value is checked here (a number
 * from 0 to 100 or a JSON object of at most 4 KiB; job/progress.ts) and sent at most once per PROGRESS_INTERVAL_MS.
 * Values reported meanwhile replace the one waiting, so a handler that reports in a tight loop costs a few writes a
 * second and holds one value, never a queue of them. The last value is sent before the attempt's outcome
 * (`flush`), so a handler that reports 100 and returns is seen at 100.
 *
 * Sending is best effort: a failed send is not the job's failure (a lost lease aborts the job's signal anyway).
 *
 * @module
 */
import { PROGRESS_INTERVAL_MS, progressError } from "../job/progress";

export class ProgressReporter {
  /** The value waiting to go (JSON text), and who waits for it to be sent. */
  private pending: { json: string; sent: Promise<void>; resolve: () => void } | null = null;
  private sending: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastAt = -Infinity;
  private flushing = false;

  constructor(
    private readonly send: (json: string) => Promise<void>,
    private readonly clock: () => number = Date.now,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {}

  /** report: throws a TypeError naming `progress` for a value that is none; resolves once it (or a later value) was sent. */
  report(value: unknown): Promise<void> {
    const problem = progressError(value);
    if (problem) throw new TypeError(`ctx.progress: ${problem}`);
    const json = JSON.stringify(value);
    if (this.pending) {
      this.pending.json = json;
      return this.pending.sent;
    }
    let resolve!: () => void;
    const sent = new Promise<void>((r) => (resolve = r));
    this.pending = { json, sent, resolve };
    this.kick();
    return sent;
  }

  /** flush: the waiting value sent now, and every send over. */
  async flush(): Promise<void> {
    this.flushing = true;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.kick();
    while (this.sending || this.pending) await (this.sending ?? this.pending!.sent);
  }

  private kick(): void {
    if (this.sending || this.timer !== null || !this.pending) return;
    const wait = this.lastAt + this.intervalMs - this.clock();
    if (wait > 0 && !this.flushing) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.kick();
      }, wait);
      return;
    }
    const p = this.pending;
    this.pending = null;
    this.lastAt = this.clock();
    this.sending = this.send(p.json)
      .catch(() => undefined)
      .finally(() => {
        this.sending = null;
        p.resolve();
        this.kick();
      });
  }
}
