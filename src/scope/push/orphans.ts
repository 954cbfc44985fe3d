/**
 * Pushed attempts a restart orphaned. A scope object's handler calls live in
 * its instance: when the object restarts (a deploy, a reset, an eviction),
 * its running pushed jobs have no call any more — the handler's side sees its
 * control stub break and aborts them (`lease_lost`). Rather than wait out a
 * whole lease and count the attempt, the new instance gives them back at once:
 * pending, due now, attempts not counted (docs/deploy.md "Production settings").
 *
 * Except for a job whose attempts keep ending that way: a job that crashes its
 * object (memory, a runaway loop) would otherwise loop for ever, unspent. After
 * ORPHAN_FREE_RELEASES such releases of the same job in a row, the next one is
 * counted as a failed attempt (retried with backoff, or failed once its attempts
 * are spent). A handler binding that is down costs nothing either way: its
 * calls fail without restarting the object (dispatch/reachability.ts).
 *
 * @module
 */
import { PUSH_WORKER } from "../jobs/pushed-leases";
import { jobRows, type JobRow } from "../jobs/job-row";
import { applyAttemptEnd, decideAttemptEnd } from "../jobs/attempt-end";
import { releaseLeased } from "../jobs/settle";
import type { HomeStore } from "../jobs/home-store";

/** Why a restart's orphans were given back: their timeline and their `job:released` events say so. */
export const ORPHAN_REASON = "its object restarted while the handler call was in flight";
/** Releases of one job in a row that cost nothing; the next one counts. */
export const ORPHAN_FREE_RELEASES = 3;

/**
 * Running jobs this object's dispatcher leased (claims made for pushed types say `push`). Most have no
 * job_lease_idx entry (pushed-leases.ts), so this reads the table — only when type_count says a job runs.
 */
const JOB_PUSHED_RUNNING = `SELECT * FROM job WHERE state = 'running' AND lease_owner = '${PUSH_WORKER}'`;
/** Any running job, pulled ones included: a type pushed before a deploy and pulled since may still hold pushed attempts. */
const ANY_RUNNING = "SELECT coalesce(sum(running), 0) AS n FROM type_count";
/**
 * The notes of a job's newest attempt ends back to pending, a release saying why: job_transition's rows and the
 * entries its row keeps (a held retry's, jobs/timeline.ts), newest first in their one numbering. A counted end may be
 * held, its entry in the row: read from the table alone, the releases before it would look unbroken.
 */
const LAST_RETURNS = `
SELECT note FROM (
  SELECT id, note FROM job_transition WHERE job_seq = ?1
  UNION ALL
  SELECT h.value ->> 0 AS id, h.value ->> 4 AS note FROM job, json_each(job.history) AS h WHERE job.seq = ?1)
ORDER BY id DESC LIMIT ?2`;
const RELEASED_NOTE = `released: ${ORPHAN_REASON}`;

/** releaseOrphans: call once per instance, before any call can start (nothing of this instance is in flight yet). */
export function releaseOrphans(store: HomeStore, now: number): { released: JobRow[]; counted: JobRow[] } {
  return store.atomic(() => {
    const released: JobRow[] = [];
    const counted: JobRow[] = [];
    if (store.sql.exec<{ n: number }>(ANY_RUNNING).one().n === 0) return { released, counted };
    for (const leased of jobRows(store.sql.exec(JOB_PUSHED_RUNNING))) {
      const notes = store.sql.exec<{ note: string | null }>(LAST_RETURNS, leased.seq, ORPHAN_FREE_RELEASES).toArray();
      if (notes.length === ORPHAN_FREE_RELEASES && notes.every((n) => n.note === RELEASED_NOTE)) {
        const error = `its object restarted during ${ORPHAN_FREE_RELEASES + 1} attempts of this job in a row; this one counts`;
        const end = decideAttemptEnd(store, leased, { error, fatal: false, consumesAttempt: true, exhaustedKind: "retries_exhausted" }, now);
        const row = applyAttemptEnd(store, leased, end, now);
        if (row) counted.push(row);
        continue;
      }
      const row = releaseLeased(store, leased, ORPHAN_REASON, now);
      if (row) released.push(row);
    }
    if (released.length + counted.length > 0) store.touched(now);
    return { released, counted };
  });
}
