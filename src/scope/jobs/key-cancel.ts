/**
 * The dedupe key modes that end a key's older jobs for its newest (docs/guards.md "Cancel for the newest";
 * Hatchet's CANCEL_IN_PROGRESS and CANCEL_QUEUED_EXCEPT_NEWEST, Inngest's singleton cancel):
 *
 * - `cancelRunning`: every live job of the key — running, waiting or pending — ends `superseded`, a running one's
 *   handler aborted (its signal; its holder's next call is `lease_lost`), and the new job is created, due now.
 * - `cancelPending`: the key's pending jobs end `superseded` (queued, or back for a retry); a running (or waiting, or resuming)
 *   job is kept, and the new job waits behind it as a follower.
 *
 * Either way, in the enqueue's own transaction: the key never has two jobs running, nor is it ever without its newest.
 * What a superseded job held ends as a cancel's does (its waits, its children, its permits held until its lease would
 * have ended).
 *
 * @module
 */
import type { KeyMode } from "../../job/key-mode";
import { sqlList } from "../../job/states";
import { TRANSITIONS } from "./../../job/transitions";
import { jobRows, type JobRow } from "./job-row";
import type { HomeStore } from "./home-store";

const SUPERSEDE_FOR_NEWEST = `
UPDATE job SET state = '${TRANSITIONS.supersede.to}', cancel_reason = ?1, finished_at = ?2, updated_at = ?2,
       lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, wait = NULL, pause_asked = NULL
 WHERE seq IN (SELECT value FROM json_each(?3)) AND state IN (${sqlList(TRANSITIONS.supersede.from)})
RETURNING *`;

/** The reason a job superseded by its key's newest carries (its holder's next call reads it: lease.ts). */
export const NEWER_OF_KEY = "superseded by a newer job of its key";

/** cancelsForNewest: whether the mode ends older jobs of its key (and which) rather than answering with one. */
export function cancelsForNewest(mode: KeyMode): mode is "cancelRunning" | "cancelPending" {
  return mode === "cancelRunning" || mode === "cancelPending";
}

/**
 * supersedeForNewest: the live jobs of the key (`live`, as liveJobsOfKey read them) that the mode ends, superseded
 * (inside the enqueue's transaction); answers them. `kept` are the ones cancelPending keeps: a running, waiting or
 * resuming job.
 */
export function supersedeForNewest(store: HomeStore, mode: "cancelRunning" | "cancelPending", live: readonly JobRow[], kept: (row: JobRow) => boolean, now: number): JobRow[] {
  const ending = mode === "cancelRunning" ? live : live.filter((r) => !kept(r));
  if (ending.length === 0) return [];
  // As a cancel: the permits a pull worker's lease holds stay held until that lease would have ended.
  store.hooks.cancelling(store, { ids: ending.map((r) => r.id) });
  const rows = jobRows(store.sql.exec(SUPERSEDE_FOR_NEWEST, `${NEWER_OF_KEY} (${mode})`, now, JSON.stringify(ending.map((r) => r.seq))));
  store.hooks.ended(store, rows, now, true);
  return rows;
}
