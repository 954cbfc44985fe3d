/**
 * What a write gathered inside its transaction beyond its rows, for what follows its commit: the steps journaled
 * and `ctx.log` lines kept (for the live subscriptions while the object has any — an object with no watchers
 * gathers none), and whether it owed another object something (workflow/outbox.ts `owe`). The one commit path puts
 * them into the write's record (changes.ts `gathered`, follow-ups.ts), the only channel the capabilities read.
 * What a transaction gathered before it rolled back is dropped with it (the store's `atomic`).
 *
 * @module
 */
import type { JobLogLine } from "../../job/log-lines";
import type { SubscriptionMessage } from "../../job/watch-message";

export type FeedItem = Extract<SubscriptionMessage, { event: "step" | "log" }>;
type Step = FeedItem & { event: "step" };

export class Feed {
  private items: FeedItem[] = [];
  /** A write owed another object something since last taken (outbox rows are sent after the commit). */
  private owes = false;

  /** `listening`: whether anyone watches here now (the watchers' count). */
  constructor(private readonly listening: () => boolean) {}

  log(id: string, lines: readonly JobLogLine[]): void {
    if (this.listening()) for (const line of lines) this.items.push({ event: "log", id, line });
  }

  step(id: string, step: Step["step"]): void {
    if (this.listening()) this.items.push({ event: "step", id, step });
  }

  /** owe: a write put a row in the outbox; a rollback keeps the mark (a send that finds nothing is harmless). */
  owe(): void {
    this.owes = true;
  }

  /** mark / rollback: what a transaction that failed gathered is dropped. */
  mark(): number {
    return this.items.length;
  }

  rollback(mark: number): void {
    this.items.length = Math.min(this.items.length, mark);
  }

  /** take: what was gathered since last taken, and the owed mark; both start anew. */
  take(): { fed: FeedItem[]; owed: boolean } {
    const owed = this.owes;
    this.owes = false;
    if (this.items.length === 0) return { fed: [], owed };
    const fed = this.items;
    this.items = [];
    return { fed, owed };
  }
}
