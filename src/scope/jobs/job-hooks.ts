/**
 * What the core's writes let the capabilities do inside the same transaction,
 * without the core knowing them (docs/design.md "The scope object: a core and
 * its capabilities"): each capability gives the hooks it needs, and the shell
 * joins them in the capability list's order (capability.ts `joinHooks`). A
 * hook runs inside the write's transaction, so what it writes commits or rolls
 * back with the job's own row.
 *
 * @module
 */
import type { JobRow } from "./job-row";
import type { HomeStore } from "./home-store";

/** Which jobs a cancel is about to end: by id, by a type's dedupe keys, or every running one (null). */
export type Cancelling = { readonly ids: readonly string[] } | { readonly type: string; readonly keys: readonly string[] } | null;

export interface JobHooks {
  /** Jobs a cancel ended: what they left open ends with them; `cascade` false leaves their children running. */
  ended(store: HomeStore, rows: readonly JobRow[], now: number, cascade: boolean): void;
  /** A job its attempt's end failed for good: what its failure owes (a failure handler, its children's cancels). */
  failed(store: HomeStore, row: JobRow, now: number): void;
  /** A job retried by hand, before its row goes back to pending: what its last run left unfinished is forgotten. */
  retrying(store: HomeStore, row: JobRow, now: number): void;
  /** A job retried by hand, pending again: what it waited on is asked for again. */
  retried(store: HomeStore, row: JobRow, now: number): void;
  /** Before a cancel, outside its transaction: what the jobs hold is kept until their leases would have ended. */
  cancelling(store: HomeStore, which: Cancelling): void;
}

/** NO_HOOKS: a core with no capability (tests of the core alone). */
export const NO_HOOKS: JobHooks = {
  ended() {},
  failed() {},
  retrying() {},
  retried() {},
  cancelling() {},
};

/** joinHooks: each hook runs every capability's part, in list order. */
export function joinHooks(parts: readonly Partial<JobHooks>[]): JobHooks {
  const all = <K extends keyof JobHooks>(k: K) => parts.flatMap((p) => (p[k] ? [p[k]!] : [])) as ((...a: Parameters<JobHooks[K]>) => void)[];
  const ended = all("ended");
  const failed = all("failed");
  const retrying = all("retrying");
  const retried = all("retried");
  const cancelling = all("cancelling");
  return {
    ended: (...a) => ended.forEach((f) => f(...a)),
    failed: (...a) => failed.forEach((f) => f(...a)),
    retrying: (...a) => retrying.forEach((f) => f(...a)),
    retried: (...a) => retried.forEach((f) => f(...a)),
    cancelling: (...a) => cancelling.forEach((f) => f(...a)),
  };
}
