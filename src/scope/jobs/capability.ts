/**
 * The one contract between a scope object's core (jobs/: the job table, and
 * insert, claim, settle, delete) and each of its capabilities — push, pull,
 * workflow, watching, batches, retention, errors, the catalog report (docs/design.md
 * "The scope object: a core and its capabilities"). The shell (scope-parts.ts)
 * holds the capabilities in one list and walks it; it wires none of them by
 * hand. A capability meets the core only here:
 *
 * - `hooks`: what it does inside a core write's transaction (jobs/job-hooks.ts);
 * - `told` and `follow`: its share of what follows a committed write, read from
 *   the write's record alone (jobs/changes.ts) — `told` for what is said at once
 *   and cannot fail the write, `follow` for what may be awaited;
 * - `wakeColumns` and `nextWake`: the columns it adds to the one wake-up
 *   statement (wake.ts: it stays one statement) and the time it reads from them
 *   and from what it keeps in memory;
 * - `alarm`: its share of the alarm pass (alarm-pass.ts);
 * - `start`: its share of a fresh instance's start, once storage is migrated.
 *
 * The list's order is the order of every walk (scope-parts.ts says why it is
 * the order it is).
 *
 * @module
 */
import type { Changes, Written } from "./changes";
import type { JobHooks } from "./job-hooks";
import type { JobRow } from "./job-row";

/** The wake-up statement's row: each capability's columns, by the names it gave them. */
export type WakeRow = Readonly<Record<string, number | null>>;

/** What one alarm pass offers each capability's share. */
export interface AlarmPass {
  readonly now: number;
  /** Pending types with a job that came due since the catalog last heard (wake.ts `cameDueSince`); null when unknown. */
  readonly cameDue: readonly string[] | null;
  /** Runs what a write of the pass changed through the commit path — its catalog report and alarm are the pass's own. */
  commit<A>(w: Written<A>): Promise<A>;
}

export interface Capability {
  /** For logs and the docs' table of capabilities. */
  readonly name: string;
  readonly hooks?: Partial<JobHooks>;
  /** Said at once of a committed write (events, aborted calls); synchronous, and never fails the write. */
  told?(c: Changes, rows: readonly JobRow[], now: number): void;
  /** What follows a committed write that may take a while (pool calls, sends), awaited in list order. */
  follow?(c: Changes, rows: readonly JobRow[], now: number): void | Promise<void>;
  /** Its columns of the one wake-up statement: name → a scalar SQL expression (`?1` is now). */
  readonly wakeColumns?: Readonly<Record<string, string>>;
  /** When it next needs the alarm: from its wake-up columns and what it keeps in memory; null for never. */
  nextWake?(row: WakeRow, now: number): number | null;
  /** Its share of the alarm pass; true when it filled its batch and the alarm should come back soon. */
  alarm?(pass: AlarmPass): Promise<boolean | void>;
  /** Its share of a fresh instance's start, storage migrated. */
  start?(now: number): Promise<void> | void;
}

/** earliest: the least of the times given, null when none. */
export function earliest(times: readonly (number | null | undefined)[]): number | null {
  let at: number | null = null;
  for (const t of times) if (t !== null && t !== undefined && (at === null || t < at)) at = t;
  return at;
}
