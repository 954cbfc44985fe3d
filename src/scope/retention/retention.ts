/**
 * The retention capability (jobs/capability.ts): terminal jobs past their
 * state's retention deleted by the alarm, a bounded batch a pass
 * (sweep-pass.ts), and `prune`, the same delete on demand. What this instance
 * knows of its completed jobs' retention is its own, in memory
 * (completed-sweep.ts), so a sweep seeks only when one is due. Nothing else of
 * the object names it but its entry in the capability list and the `prune`
 * door (docs/design.md "The scope object: a core and its capabilities").
 *
 * @module
 */
import type { TerminalState } from "../../job/states";
import type { AlarmPass, Capability, WakeRow } from "../jobs/capability";
import { changed, nothing, written, type Changes, type Written } from "../jobs/changes";
import type { HomeStore } from "../jobs/home-store";
import { CompletedSweep } from "./completed-sweep";
import { prune, RETENTION_WAKE_COLUMNS, sweepAtOf, sweepOnce } from "./sweep-pass";

export class Retention implements Capability {
  readonly name = "retention";
  readonly wakeColumns = RETENTION_WAKE_COLUMNS;
  readonly completed = new CompletedSweep();

  constructor(private readonly store: HomeStore) {}

  /** Rows a write changed: the sweep of completed jobs learns when they pass their retention. */
  told(c: Changes): void {
    this.completed.note(c.events, this.store.config.retention.completedMs);
  }

  nextWake(row: WakeRow, now: number): number | null {
    return sweepAtOf(this.store, this.completed, row, now);
  }

  /** The sweep; its permit pass (a cancelled job may still hold permits) is the pull capability's, later in the pass. */
  async alarm(pass: AlarmPass): Promise<boolean> {
    const swept = this.sweep(pass.now);
    const { more } = await pass.commit({ ...swept, changes: { ...swept.changes, permits: null } });
    return more;
  }

  /** sweep: the retention pass — terminal jobs past their retention deleted (a cancelled one may still hold permits). */
  sweep(now: number): Written<{ more: boolean }> {
    const { deleted, more } = sweepOnce(this.store, this.completed, now);
    return written({ more }, deleted > 0 ? changed({ permits: { refundLease: null } }) : nothing());
  }

  /** prune: terminal jobs of these states that finished before `olderThan`, deleted now. */
  prune(olderThan: number, states: readonly TerminalState[], now: number): Written<number> {
    const n = prune(this.store, this.completed, olderThan, states, now);
    // Retention may have taken rows whose permits were still held for a cancel.
    return written(n, n > 0 ? changed({ permits: { refundLease: null } }) : { ...nothing(), permits: { refundLease: null } });
  }
}
