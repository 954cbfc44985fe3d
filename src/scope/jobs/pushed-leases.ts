/**
 * The leases of pushed attempts, held in the object's memory instead of
 * job_lease_idx. A pushed attempt's handler call lives in this instance
 * (dispatch/): while the instance lives, it knows the call and its lease; when
 * the instance goes, a new one gives every pushed attempt back at its start
 * (orphans.ts) without asking for the lease. So the index entry — one row
 * written per attempt, Cloudflare's billed unit — only ever served the alarm
 * and the reap pass of an instance that already knew (docs/design.md "What a
 * job costs"). The row still holds its lease (state, token, expiry), so every
 * fenced call reads it as before; only the index entry is gone (`lease_kept`
 * 0).
 *
 * A type that runs one at a time (ordered, serializeByScope in a scope
 * object) keeps the index entry: whether it is busy is asked of the index
 * (claim.ts, serialBusy).
 *
 * The map may be stale the safe way only: a lease renewed elsewhere (a step,
 * a heartbeat) is later than what it says, and a job settled by another path
 * (a cancel) is gone. The alarm then comes early and the reap pass reads the
 * row (reap-pass.ts): a live lease is held again at its new expiry, anything
 * else dropped.
 *
 * @module
 */
import type { JobRow } from "./job-row";
import { HeldTimes } from "./held-retries";

/** The lease owner the dispatcher's claims carry (scope/push/orphans.ts releases them when an instance restarts). */
export const PUSH_WORKER = "push";

/** leaseKept: the `lease_kept` a claim by `worker` gives its jobs (a pushed claim is of one type; `serial`: it runs one at a time). */
export function leaseKept(worker: string, serial: boolean): 0 | 1 {
  return worker === PUSH_WORKER && !serial ? 0 : 1;
}

export class PushedLeases {
  /** job id → lease expiry (epoch ms). */
  private readonly leases = new Map<string, number>();
  /** The retries this instance's dispatcher holds between attempts (held-retries.ts), by the same rows' notes. */
  readonly held = new HeldTimes();

  /** note: rows a write returned — a pushed running one is held at its expiry, a held retry at its time, any other forgotten. */
  note(rows: readonly JobRow[]): void {
    for (const r of rows) {
      if (r.state === "running" && r.lease_kept === 0 && r.lease_expires_at !== null) this.leases.set(r.id, r.lease_expires_at);
      else this.leases.delete(r.id);
      this.held.note(r);
    }
  }

  /** renewed: the lease on job `id` now runs to `expiresAt`. */
  renewed(id: string, expiresAt: number): void {
    if (this.leases.has(id)) this.leases.set(id, expiresAt);
  }

  /** forget: drop these ids (the reap pass read their rows). */
  forget(ids: readonly string[]): void {
    for (const id of ids) this.leases.delete(id);
  }

  /** earliest: the first expiry held, or a held retry's next time (held-retries.ts) if sooner; null for neither. */
  earliest(now: number): number | null {
    let first: number | null = this.held.next(now);
    for (const at of this.leases.values()) if (first === null || at < first) first = at;
    return first;
  }

  /** expired: the ids whose held expiry is at or before `now` (the reap pass reads their rows). */
  expired(now: number): string[] {
    const out: string[] = [];
    for (const [id, at] of this.leases) if (at <= now) out.push(id);
    return out;
  }

  get size(): number {
    return this.leases.size;
  }
}
