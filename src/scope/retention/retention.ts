/**
 * The retention capability (capability.ts): terminal jobs past their state's
 * retention deleted by the alarm, a bounded batch a pass (sweep-pass.ts), with
 * what this instance knows of its completed jobs' retention kept in memory
 * (completed-sweep.ts) so that a sweep seeks only when one is due.
 *
 * @module
 */
import type { AlarmPass, Capability, WakeRow } from "../jobs/capability";
import type { Changes } from "../jobs/changes";
import { RETENTION_WAKE_COLUMNS, sweepAtOf } from "./sweep-pass";
import { retentionWrites } from "./retention-writes";
import type { RetentionStore } from "./retention-store";

export class Retention implements Capability {
  readonly name = "retention";
  readonly wakeColumns = RETENTION_WAKE_COLUMNS;

  constructor(private readonly store: RetentionStore) {}

  /** Rows a write changed: the sweep of completed jobs learns when they pass their retention. */
  told(c: Changes): void {
    this.store.completed.note(c.events, this.store.config.retention.completedMs);
  }

  nextWake(row: WakeRow, now: number): number | null {
    return sweepAtOf(this.store, row, now);
  }

  /** The sweep; its permit pass (a cancelled job may still hold permits) is the pull capability's, later in the pass. */
  async alarm(pass: AlarmPass): Promise<boolean> {
    const swept = retentionWrites.sweep(this.store, pass.now);
    const { more } = await pass.commit({ ...swept, changes: { ...swept.changes, permits: null } });
    return more;
  }
}
