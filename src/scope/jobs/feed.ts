/**
 * What writes added to jobs' journals and logs — a step journaled, a `ctx.log` line kept — gathered for the live
 * subscriptions (watchers.ts) while the object has any: the one commit path takes it with the write's record
 * (follow-ups.ts) and the watchers of each job hear of it as `step` and `log` messages. An object with no watchers
 * gathers nothing. What a transaction gathered before it rolled back is dropped with it (the store's `atomic`).
 *
 * @module
 */
import type { JobLogLine } from "../../job/log-lines";
import type { Message } from "../watching/watch-messages";

export type FeedItem = Extract<Message, { event: "step" | "log" }>;
type Step = FeedItem & { event: "step" };

export class Feed {
  private items: FeedItem[] = [];

  /** `listening`: whether anyone watches here now (the watchers' count). */
  constructor(private readonly listening: () => boolean) {}

  log(id: string, lines: readonly JobLogLine[]): void {
    if (this.listening()) for (const line of lines) this.items.push({ event: "log", id, line });
  }

  step(id: string, step: Step["step"]): void {
    if (this.listening()) this.items.push({ event: "step", id, step });
  }

  /** mark / rollback: what a transaction that failed gathered is dropped. */
  mark(): number {
    return this.items.length;
  }

  rollback(mark: number): void {
    this.items.length = Math.min(this.items.length, mark);
  }

  take(): FeedItem[] {
    if (this.items.length === 0) return [];
    const taken = this.items;
    this.items = [];
    return taken;
  }
}
