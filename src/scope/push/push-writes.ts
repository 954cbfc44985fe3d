/**
 * The push capability's write: a new instance gives back the pushed attempts
 * of the one before (orphans.ts).
 *
 * @module
 */
import { nothing, written, type Written } from "../jobs/changes";
import type { HomeStore } from "../jobs/home-store";
import type { JobRow } from "../jobs/job-row";
import { ORPHAN_REASON, releaseOrphans } from "./orphans";

export const pushWrites = {
  /** orphans: a new instance gives back the pushed attempts of the one before, unspent (orphans.ts). */
  orphans(store: HomeStore, now: number): Written<{ n: number; rows: JobRow[] }> {
    const { released, counted } = releaseOrphans(store, now);
    // Their events only: the instance's alarm, set for now, dispatches them and tells the catalog.
    const n = released.length + counted.length;
    return written({ n, rows: [...released, ...counted] }, n > 0 ? { ...nothing(), events: counted, released: { rows: released, reason: ORPHAN_REASON } } : nothing());
  },
};
