/**
 * The core's own share of the walks the capabilities take part in
 * (capability.ts): its columns of the one wake-up statement — the next
 * pending job to become due (one seek per priority level, levels.ts) and the
 * earliest lease expiry in job_lease_idx — and the times it keeps in memory
 * (a never-started job's expiry, expiry.ts; a pause that holds work back,
 * pause-gate.ts); its alarm share ends the attempts whose lease ran out (the
 * reap pass) and the jobs whose expiry passed.
 *
 * @module
 */
import type { AlarmPass, Capability, WakeRow } from "./capability";
import { earliest } from "./capability";
import { PENDING_UNPAUSED_COUNT } from "./counts";
import type { HomeStore } from "./home-store";
import { jobWrites } from "./job-writes";
import { LEVEL_JOB, levelsCte } from "./levels";
import type { PauseGate } from "./pause-gate";

/** The wake-up statement's common table: the priority levels of each unpaused pending type (levels.ts). */
export const CORE_WAKE_CTE = `WITH RECURSIVE ${levelsCte(`SELECT c.type FROM type_count AS c WHERE ${PENDING_UNPAUSED_COUNT}`)}`;

export class Core implements Capability {
  readonly name = "jobs";
  readonly wakeColumns = {
    due: `(SELECT min((SELECT min(j.run_at) FROM job AS j WHERE ${LEVEL_JOB} AND j.run_at > ?1)) FROM lv WHERE lv.p IS NOT NULL)`,
    lease: "(SELECT min(lease_expires_at) FROM job WHERE state = 'running' AND lease_kept = 1)",
  };

  constructor(
    private readonly store: HomeStore,
    private readonly pause: () => PauseGate,
  ) {}

  nextWake(row: WakeRow, now: number): number | null {
    return earliest([row.due, row.lease, this.store.expiries.next(), this.pause().heldBackUntil(now)]);
  }

  /** Reaped attempts and expired jobs are writes like any other; the catalog and the alarm are the pass's own. */
  async alarm(pass: AlarmPass): Promise<boolean> {
    const reaped = await pass.commit(jobWrites.reap(this.store, pass.now));
    // Jobs never started whose expiry passed end expired (expiry.ts).
    const expired = await pass.commit(jobWrites.expire(this.store, pass.now));
    return reaped.more || expired.more;
  }
}
