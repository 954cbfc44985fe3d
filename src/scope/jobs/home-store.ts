/**
 * HomeStore: the store of one home — one scope object's SQLite, as its
 * operations see it: its SQL, a way to run a block atomically, the config,
 * randomness, and a hook that records "the summary changed" inside the same
 * transaction (a home is a scope, or a shard of a type's unscoped jobs:
 * docs/design.md "Where a job lives, and its id"). Tests build one over a real
 * object's storage and call the operations directly.
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import { randomHex } from "../../random-hex";
import type { PushedLeases } from "./pushed-leases";
import type { CompletedSweep } from "../retention/completed-sweep";
import type { RecentEvents } from "../workflow/event-waits";
import type { ExpiryMemo } from "./expiry";
import type { Feed } from "./feed";

export interface HomeStore {
  readonly sql: SqlStorage;
  /** Runs `fn` synchronously in one transaction; a throw rolls every write back. */
  atomic<T>(fn: () => T): T;
  readonly config: QueueConfig;
  /** Uniform in [0, 1); injectable so backoff is testable. */
  readonly random: () => number;
  /** Marks the catalog summary stale; called inside write transactions. */
  touched(now: number): void;
  /** Marks that a write owed other objects something (outbox.ts owe): the commit's follow-ups send it. */
  owed(): void;
  /** This object holds a scope's jobs (not a shard of a type's unscoped jobs). */
  readonly scoped: boolean;
  /** The leases of this instance's pushed attempts, which have no job_lease_idx entry (pushed-leases.ts). */
  readonly pushed: PushedLeases;
  /** What this instance knows of its completed jobs' retention (completed-sweep.ts). */
  readonly completed: CompletedSweep;
  /** The earliest expiry of a job never started, kept in memory (expiry.ts). */
  readonly expiries: ExpiryMemo;
  /** A topic registry's events of the last few minutes, in memory (event-waits.ts). */
  readonly recentEvents: RecentEvents;
  /** Steps and log lines written, for the live subscriptions while there are any (feed.ts). */
  readonly feed: Feed;
  /** The queue's QUEUE_TOKEN, from which wait tokens' signing key is derived (job/wait-token.ts); null when unset. */
  readonly queueToken: string | null;
}

/** newLeaseToken: 128 random bits, hex. */
export function newLeaseToken(): string {
  return randomHex(16);
}
