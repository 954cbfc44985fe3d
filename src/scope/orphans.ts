/**
 * Pushed attempts a restart orphaned. A scope object's handler calls live in
 * its instance: when the object restarts (a deploy, a reset, an eviction),
 * its running pushed jobs have no call any more — the handler's side sees its
 * control stub break and aborts them (`lease_lost`). Rather than wait out a
 * whole lease and count the attempt, the new instance gives them back at once:
 * pending, due now, attempts not counted (docs/deploy.md "Production settings").
 *
 * @module
 */
import { PUSH_WORKER } from "./dispatch-port";
import { jobRows, type JobRow } from "./job-row";
import { releaseLeased } from "./settle";
import type { ScopeStore } from "./store";

/** Running jobs this object's dispatcher leased (claims made for pushed types say `push`): job_lease_idx. */
const JOB_PUSHED_RUNNING = `SELECT * FROM job WHERE state = 'running' AND lease_owner = '${PUSH_WORKER}'`;

/** Why a restart's orphans were given back: their timeline and their `job:released` events say so. */
export const ORPHAN_REASON = "its object restarted while the handler call was in flight";

/** releaseOrphans: call once per instance, before any call can start (nothing of this instance is in flight yet). */
export function releaseOrphans(store: ScopeStore, now: number): JobRow[] {
  return store.atomic(() => {
    const out: JobRow[] = [];
    for (const leased of jobRows(store.sql.exec(JOB_PUSHED_RUNNING))) {
      const row = releaseLeased(store, leased, ORPHAN_REASON, now);
      if (row) out.push(row);
    }
    if (out.length > 0) store.touched(now);
    return out;
  });
}
