/**
 * HomeStore: the store of one home — one scope object's SQLite, as the core's
 * operations see it: its SQL, a way to run a block atomically, the config,
 * randomness, a hook that records "the summary changed" inside the same
 * transaction, the capabilities' in-transaction hooks (job-hooks.ts), what a
 * write gathered for after its commit (feed.ts), and the two memos of stored
 * times the core keeps so the wake-up need not read them (a home is a scope,
 * or a shard of a type's unscoped jobs: docs/design.md "Where a job lives,
 * and its id"). A capability that keeps more asks for its own store type
 * (workflow/workflow-store.ts) or keeps it itself (retention/retention.ts);
 * the shell's store is all of them. Tests build one over a real object's storage and call
 * the operations directly.
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import { randomHex } from "../../random-hex";
import type { PushedLeases } from "./pushed-leases";
import type { ExpiryMemo } from "./expiry";
import type { Feed } from "./feed";
import type { JobHooks } from "./job-hooks";

export interface HomeStore {
  readonly sql: SqlStorage;
  /** Runs `fn` synchronously in one transaction; a throw rolls every write back. */
  atomic<T>(fn: () => T): T;
  readonly config: QueueConfig;
  /** Uniform in [0, 1); injectable so backoff is testable. */
  readonly random: () => number;
  /** Marks the catalog summary stale; called inside write transactions. */
  touched(now: number): void;
  /** This object holds a scope's jobs (not a shard of a type's unscoped jobs). */
  readonly scoped: boolean;
  /** What the capabilities do inside the core's writes (job-hooks.ts). */
  readonly hooks: JobHooks;
  /** Steps and log lines written, and the outbox's mark: taken into the write's record after it (feed.ts). */
  readonly feed: Feed;
  /** The leases of this instance's pushed attempts, which have no job_lease_idx entry (pushed-leases.ts). */
  readonly pushed: PushedLeases;
  /** The earliest expiry of a job never started, kept in memory (expiry.ts). */
  readonly expiries: ExpiryMemo;
}

/** newLeaseToken: 128 random bits, hex. */
export function newLeaseToken(): string {
  return randomHex(16);
}
