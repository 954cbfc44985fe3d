/**
 * What follows a scope object's committed write, run from its record
 * (jobs/changes.ts) by one function, always in one order (docs/design.md "One
 * commit path"): the record takes in what the write gathered beside its rows
 * (jobs/feed.ts: steps and log lines, an outbox mark), then
 *
 * 1. told — each capability, in the list's order, says at once what must be
 *    said (events, watchers, spans, aborted calls); nothing here awaits or
 *    fails the write;
 * 2. follow — each capability's share that may take a while, awaited in the
 *    list's order: pulled leases' permits renewed or returned and parked claims
 *    woken (pull), the dispatcher's fill (push, not awaited: it may wait on a
 *    pool), what the write owed sent (workflow), callbacks (watching), the
 *    catalog report kicked (report: before arming, as a report in flight moves
 *    the deadline the alarm waits for);
 * 3. alarm — set anew for the next wake-up, when the record asks or the write
 *    owed something (an owed row's send time sets it).
 *
 * @module
 */
import type { Capability } from "./jobs/capability";
import { rowsOf, type Changes } from "./jobs/changes";
import type { Feed } from "./jobs/feed";

export interface FollowUpDeps {
  /** What writes gathered in their transactions since last taken (feed.ts). */
  feed: Pick<Feed, "take">;
  arm(now: number): Promise<void>;
}

export class FollowUps {
  constructor(
    private readonly capabilities: readonly Capability[],
    private readonly d: FollowUpDeps,
  ) {}

  async run(changes: Changes, now: number): Promise<void> {
    const taken = this.d.feed.take();
    const c: Changes = { ...changes, gathered: { fed: [...changes.gathered.fed, ...taken.fed], owed: changes.gathered.owed || taken.owed } };
    const rows = rowsOf(c);
    for (const cap of this.capabilities) cap.told?.(c, rows, now);
    for (const cap of this.capabilities) {
      // Awaited only when a share has something to wait for: most writes' follow-ups are all synchronous.
      const p = cap.follow?.(c, rows, now);
      if (p) await p;
    }
    if (c.arm || c.gathered.owed) await this.d.arm(now);
  }
}
