/**
 * Held retries (docs/design.md "Held retries"): a pushed job's failed attempt
 * goes back to `pending` for its backoff as any retry does, but its object's
 * dispatcher holds it — the row is `held` (no job_claim_idx entry) and this
 * instance's memory keeps its time; when it comes due, the dispatcher starts
 * it straight to its handler (`restartHeld`), as a new job's straight start
 * does (push/straight.ts). A retry then writes its row twice (the failure,
 * the restart) where it wrote the row and its index entry twice, and jobs of
 * a type with retries backing off still go straight to a handler.
 *
 * Only this instance knows its held rows' times. Its first hold marks `meta`
 * (`held_retries`) in the same transaction; an instance that starts with the
 * mark gives every held row back to the index (`releaseHeld`) before it serves
 * anything — a scan of the job table, once per instance that follows one
 * that held — and they are claimed as any pending job is. The object's alarm
 * stands at the earliest held time (PushedLeases.earliest), so a held retry
 * is never later than a pending one would have been, through any restart.
 *
 * Which retries are held is the push capability's (its `holdRetry` hook:
 * push/straight.ts, the types a new job of which would go straight).
 *
 * @module
 */
import { jobRows, type JobRow } from "./job-row";
import { TRANSITIONS } from "../../job/transitions";
import type { HomeStore } from "./home-store";
import { tallyHeld } from "./tallies";

/**
 * The mark holds the lowest seq this instance held: written by the first hold (and by a hold of an older job), no
 * row written by any other. Text in `meta`, compared as a number.
 */
const MARK = `
INSERT INTO meta (key, value) VALUES ('held_retries', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value
 WHERE CAST(excluded.value AS INTEGER) < CAST(meta.value AS INTEGER)`;
const MARKED = "SELECT CAST(value AS INTEGER) AS seq FROM meta WHERE key = 'held_retries'";
const UNMARK = "DELETE FROM meta WHERE key = 'held_retries'";
/** releaseFrom: no index holds `held` rows (that is the point): the primary key's range from the lowest held seq. */
const RELEASE_FROM = "UPDATE job SET held = 0 WHERE seq >= ? AND held = 1 AND state = 'pending' RETURNING seq";
/** releaseOne: a held row back to the claim index (jobs of its type there are due before it). */
const RELEASE_ONE = "UPDATE job SET held = 0 WHERE seq = ? AND held = 1 AND state = 'pending' RETURNING *";

/**
 * A retry is held only when it comes due within this: an object idle for about a minute may be evicted, and the next
 * instance gives what it held back to the index — a longer hold would then write the row once more for nothing.
 */
export const HELD_WAIT_MAX_MS = 60_000;
/** At most this many held at once per instance (an outage of a handler): past it, retries go to the index. */
export const HELD_MAX = 512;

/**
 * restartHeld: a held, due retry straight to `running` under a pushed lease held in memory (lease_kept 0), its
 * attempt counted as a claim's is. Params ?1 now, ?2 leaseMs, ?3 lease token, ?4 worker, ?5 seq. A row that left
 * the hold meanwhile (a cancel, a release) is not touched.
 */
const RESTART = `
UPDATE job
   SET state = '${TRANSITIONS.claim.to}', held = 0, tally = tally + 1, attempts = attempts + 1, lease_token = ?3, lease_owner = ?4, lease_ms = ?2, lease_kept = 0,
       lease_expires_at = CASE WHEN timeout_ms IS NULL THEN ?1 + ?2 ELSE min(?1 + ?2, ?1 + timeout_ms) END,
       started_at = ?1, updated_at = ?1
 WHERE seq = ?5 AND held = 1 AND state = 'pending'
RETURNING *`;

/** markHeld: in the transaction of a hold of job `seq`: the next instance must give held rows back. */
export function markHeld(sql: SqlStorage, seq: number): void {
  sql.exec(MARK, String(seq));
}

/** releaseHeld: at an instance's start, before anything reads the claim index: every held row back to it; how many. */
export function releaseHeld(sql: SqlStorage): number {
  const mark = sql.exec<{ seq: number }>(MARKED).toArray()[0];
  if (!mark) return 0;
  const n = sql.exec(RELEASE_FROM, mark.seq).toArray().length;
  sql.exec(UNMARK);
  return n;
}

/**
 * mayHoldRetry: the core's half of whether a retry of `row` due at `runAt` may be held now — soon enough, room in
 * memory, no key (a key's follower checks read pending rows of the key) — the push capability's `holdRetry` hook the
 * other half (which types, which leases).
 */
export function mayHoldRetry(held: HeldTimes, row: { dedupe_key: string | null }, runAt: number, now: number): boolean {
  return row.dedupe_key === null && runAt - now <= HELD_WAIT_MAX_MS && held.size < HELD_MAX;
}

export function releaseOne(sql: SqlStorage, seq: number): JobRow[] {
  return jobRows(sql.exec(RELEASE_ONE, seq));
}

/** restartHeld: the restart, counted (its `tally` moved, so the count trigger leaves it to tallyHeld). */
export function restartHeld(store: HomeStore, seq: number, now: number, leaseMs: number, token: string, worker: string): JobRow[] {
  const rows = jobRows(store.sql.exec(RESTART, now, leaseMs, token, worker, seq));
  for (const r of rows) tallyHeld(store, r, "restarted", now);
  return rows;
}

/** What memory keeps of a held row. */
export interface Held {
  readonly seq: number;
  readonly type: string;
  readonly priority: number;
  readonly runAt: number;
}

/**
 * HeldTimes: this instance's held rows by id. Stale only the safe way, as PushedLeases is: a row that left the
 * hold by another path is forgotten when its write's rows are noted, and a restart or release checks the row.
 */
export class HeldTimes {
  private readonly held = new Map<string, Held>();

  /** note: a written row — held and pending: kept at its time; anything else: forgotten. */
  note(r: JobRow): void {
    if (r.state === "pending" && r.held === 1) this.held.set(r.id, { seq: r.seq, type: r.type, priority: r.priority, runAt: r.run_at });
    else this.held.delete(r.id);
  }

  forget(id: string): void {
    this.held.delete(id);
  }

  has(id: string): boolean {
    return this.held.has(id);
  }

  /**
   * next: the first held time after `now`, or null. One due already is the dispatcher's to start at its next fill
   * (the alarm's, a call's end, a pause sync), as a due pending job is: the wake-up is for the times to come.
   */
  next(now: number): number | null {
    let first: number | null = null;
    for (const h of this.held.values()) if (h.runAt > now && (first === null || h.runAt < first)) first = h.runAt;
    return first;
  }

  /** due: the held rows of `type` (any type without one) due at `now`, in claim order (priority, time, age). */
  due(now: number, type?: string): (Held & { id: string })[] {
    const out: (Held & { id: string })[] = [];
    for (const [id, h] of this.held) if (h.runAt <= now && (type === undefined || h.type === type)) out.push({ id, ...h });
    return out.sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || a.seq - b.seq);
  }

  /** ofType: how many of `type` are held, how many of them after `now`, and their earliest time (the summary's split). */
  ofType(type: string, now = Infinity): { n: number; later: number; first: number | null } {
    let n = 0;
    let later = 0;
    let first: number | null = null;
    for (const h of this.held.values()) {
      if (h.type !== type) continue;
      n++;
      if (h.runAt > now) later++;
      if (first === null || h.runAt < first) first = h.runAt;
    }
    return { n, later, first };
  }

  get size(): number {
    return this.held.size;
  }
}
