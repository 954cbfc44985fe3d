/**
 * The retention capability's writes: the sweep of terminal jobs past their
 * retention (the alarm's), and `prune`, the same delete on demand.
 *
 * @module
 */
import type { TerminalState } from "../../job/states";
import { changed, nothing, written, type Written } from "../jobs/changes";
import { prune, sweepOnce } from "./sweep-pass";
import type { RetentionStore } from "./retention-store";

export const retentionWrites = {
  /** sweep: the retention pass — terminal jobs past their retention deleted (a cancelled one may still hold permits). */
  sweep(store: RetentionStore, now: number): Written<{ more: boolean }> {
    const { deleted, more } = sweepOnce(store, now);
    return written({ more }, deleted > 0 ? changed({ permits: { refundLease: null } }) : nothing());
  },

  prune(store: RetentionStore, olderThan: number, states: readonly TerminalState[], now: number): Written<number> {
    const n = prune(store, olderThan, states, now);
    // Retention may have taken rows whose permits were still held for a cancel.
    return written(n, n > 0 ? changed({ permits: { refundLease: null } }) : { ...nothing(), permits: { refundLease: null } });
  },
};
