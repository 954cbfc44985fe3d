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
import type { ErrorKind } from "../../job/error-group";
import type { QueueConfig } from "../../config/schema";
import { randomHex } from "../../random-hex";
import type { Lens } from "../../sealing/lens";
import type { PushedLeases } from "./pushed-leases";
import type { ExpiryMemo } from "./expiry-memo";
import type { CountDebt } from "./count-debt";
import type { Feed } from "./feed";
import type { JobRow } from "./job-row";

export interface HomeStore {
  readonly sql: SqlStorage;
  /** Runs `fn` synchronously in one transaction; a throw rolls every write back. */
  atomic<T>(fn: () => T): T;
  readonly config: QueueConfig;
  /** Seals values as they are stored and shows them as each reader may see them (sealing/lens.ts). */
  readonly lens: Lens;
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
  /** Counts owed to `type_count`, written when they are next read (count-debt.ts). */
  readonly debt: CountDebt;
}

/**
 * The hooks: what the capabilities do inside the core's writes, joined in the capability list's order
 * (job-hooks.ts `joinHooks`). A hook runs inside the write's transaction, so what it writes commits or rolls back
 * with the job's own row.
 */
/** Which jobs a cancel is about to end: by id, by a type's dedupe keys, or every running one (null). */
export type Cancelling = { readonly ids: readonly string[] } | { readonly type: string; readonly keys: readonly string[] } | null;

export interface JobHooks {
  /** Jobs a cancel ended: what they left open ends with them; `cascade` false leaves their children running. */
  ended(store: HomeStore, rows: readonly JobRow[], now: number, cascade: boolean): void;
  /** A job its attempt's end failed for good: what its failure owes (a failure handler, its children's cancels). */
  failed(store: HomeStore, row: JobRow, now: number): void;
  /** An attempt that ended in an error (retried or failed): `row` as its end left it (its error group: scope/errors/). */
  erred(store: HomeStore, row: JobRow, error: AttemptError, now: number): void;
  /** A job retried by hand, before its row goes back to pending: what its last run left unfinished is forgotten. */
  retrying(store: HomeStore, row: JobRow, now: number): void;
  /** A job retried by hand, pending again: what it waited on is asked for again. */
  retried(store: HomeStore, row: JobRow, now: number): void;
  /** Before a cancel, outside its transaction: what the jobs hold is kept until their leases would have ended. */
  cancelling(store: HomeStore, which: Cancelling): void;
  /**
   * How many handler calls may start now for new jobs of `type` an enqueue inserts straight into `running` (docs/design.md
   * "Straight to a handler"), each carrying up to the type's batch size; 0 when its jobs may not. The least any
   * capability allows; 0 when none speaks.
   */
  startable(store: HomeStore, type: string, now: number): number;
  /**
   * Whether a failed attempt's retry of `row` (running, its attempt just ended) may be held by this object's
   * dispatcher instead of going back to the claim index (held-retries.ts): true only when every capability that
   * speaks says so, false when none does.
   */
  holdRetry(store: HomeStore, row: JobRow): boolean;
}

/** What an attempt's error was: its kind (job/error-group.ts), its message, and its stack's first frame when sent. */
export interface AttemptError {
  kind: ErrorKind;
  message: string;
  frame: string | null;
}

/** newLeaseToken: 128 random bits, hex. */
export function newLeaseToken(): string {
  return randomHex(16);
}
