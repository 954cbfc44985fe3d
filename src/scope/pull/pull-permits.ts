/**
 * Guards for pulled types (docs/pull-workers.md "Pull workers"): a claim of a type with a
 * `concurrency`, pools, a `notWhileRunning` pair or `waitsFor` takes the same
 * permits a pushed call of it would (pool/permit-plan.ts), before it
 * leases, and keeps them with the lease in `job_permit`:
 *
 * - taken: for no more jobs than are due, trimmed to the smallest grant; the
 *   jobs leased and their permit rows are written in one transaction, and the
 *   permits left over go back refunded (no attempt started with them);
 * - renewed: by each heartbeat of the lease, to PERMIT_TTL_FACTOR × the lease;
 * - returned: once no running attempt of that lease holds them (complete,
 *   fail, release, sleep, the reap pass, retention) — `returnable`
 *   takes every such row, so a return lost with the object is made by the
 *   next one, and the pool's own TTL frees a permit whose release never came;
 * - held past a cancel: a cancelled worker stops at its next heartbeat, so
 *   the permits stay until the lease it had would have ended (`holdPermits`),
 *   and the guard is never exceeded while it winds down.
 *
 * A refused claim joins the pool's waiting line as this object; the pool's
 * poke when a slot frees wakes the claims parked for the type (scope-do.ts).
 *
 * @module
 */
import { keyedType } from "../../config/limits";
import { gatherUntil } from "../jobs/gathering";
import { admit, claimGranted, type AdmitDeps } from "../../pool/admit";
import { PERMIT_TTL_FACTOR, takePermits, type Held, type PoolApi } from "../../pool/permit-plan";
import type { KeyTurns } from "../../pool/key-turns";
import { permitsOf } from "../../pool/keyed-take";
import { countDueOfKey, nextDueKey } from "../jobs/keyed-claim";
import { busyHere, claimJobs, countStartable, type ClaimRequest } from "../jobs/claim";
import { pendingTypes } from "../jobs/counts";
import type { JobRow } from "../jobs/job-row";
import type { HomeStore } from "../jobs/home-store";
import { byId, idSeq } from "../jobs/read";

const PERMIT_INSERT = "INSERT INTO job_permit (pool, permit_id, job_seq, lease_token) VALUES (?, ?, ?, ?)";
/** permitsOfLease: job_permit_job_idx, then the job by its primary key. */
const PERMITS_OF_LEASE = `
SELECT p.pool, p.permit_id FROM job AS j JOIN job_permit AS p ON p.job_seq = j.seq
 WHERE ${byId("?1", "?3", "j")} AND p.lease_token = ?2`;
/** permitsReturnable: the table holds only running pulled attempts' permits, so the scan is short. */
const PERMITS_RETURNABLE = `
DELETE FROM job_permit AS p
 WHERE (p.hold_until IS NULL OR p.hold_until <= ?)
   AND NOT EXISTS (SELECT 1 FROM job AS j WHERE j.seq = p.job_seq AND j.state = 'running' AND j.lease_token = p.lease_token)
RETURNING pool, permit_id`;
/** permitsHold: before a cancel ends running attempts, keep their permits until their leases would have ended. */
const PERMITS_HOLD = `
UPDATE job_permit AS p SET hold_until = (SELECT j.lease_expires_at FROM job AS j WHERE j.seq = p.job_seq)
 WHERE p.job_seq IN (SELECT seq FROM job WHERE state = 'running' AND lease_kept = 1 AND (?1 IS NULL OR id = ?1))`;
/** permitsHoldOfKeys: the same, before a cancel by dedupe keys (?1 type, ?2 json array of keys). */
const PERMITS_HOLD_OF_KEYS = `
UPDATE job_permit AS p SET hold_until = (SELECT j.lease_expires_at FROM job AS j WHERE j.seq = p.job_seq)
 WHERE p.job_seq IN (SELECT seq FROM job WHERE state = 'running' AND lease_kept = 1 AND type = ?1 AND dedupe_key IN (SELECT value FROM json_each(?2)))`;

export interface PullClaimDeps {
  store: HomeStore;
  holder: string;
  /** Whose turn it is among keyed types' key values in this object's pull claims. */
  turns: KeyTurns;
  pool(name: string): PoolApi;
  /** The first of these types with due or running work anywhere (the catalog's view), or null. */
  busyType(types: string[]): Promise<string | null>;
  /** Give permits back (refunded: no attempt started with them). */
  giveBack(pool: string, ids: string[]): void;
  now(): number;
}

/**
 * pullClaim: the claim of a pull worker. Each type asked for is let past its guards as a pushed call of it is
 * (pool/admit.ts: the gathering hold, waitsFor, its permits, outside any transaction; unguarded types are claimed
 * as before) and is then claimed at most that many times — all in the one claim transaction, so priority order
 * across types holds; what no leased job took goes back refunded.
 */
export async function pullClaim(deps: PullClaimDeps, req: ClaimRequest): Promise<JobRow[]> {
  const { store } = deps;
  const config = store.config;
  const present = pendingTypes(store.sql).filter((t) => (req.types === null || req.types.includes(t)) && !req.exclude?.includes(t));
  const caps = new Map<string, number>();
  const keys = new Map<string, ReadonlyMap<string, number>>();
  /** Per type, per key value ("" for an unkeyed type): the permits granted. */
  const held = new Map<string, ReadonlyMap<string, Held[]>>();
  const ask = { holder: deps.holder, ttlMs: req.leaseMs * PERMIT_TTL_FACTOR };
  const admitDeps: AdmitDeps = {
    config,
    now: () => deps.now(),
    turns: deps.turns,
    countDue: (type, now, max) => countStartable(store, type, now, max),
    gatherUntil: (type, now) => gatherUntil(store, type, now),
    busyHere: (types, now) => busyHere(store, types, now),
    busyType: (types) => deps.busyType(types),
    keyed: (type) => keyedType(config, type),
    nextDueKey: (type, now, after) => nextDueKey(store.sql, type, now, after),
    countDueOfKey: (type, key, now, max) => countDueOfKey(store.sql, type, key, now, max),
    take: (plan, want) => takePermits(plan, { ...ask, want }, deps.pool, deps.giveBack),
  };
  for (const type of present) {
    // A refused type (gathering, none due, waitsFor, a pool) takes none; a refused key value waits for its pool's poke.
    const admitted = await admit(admitDeps, { type, limit: req.limit, count: "first" });
    caps.set(type, admitted.ok ? admitted.want : 0);
    if (!admitted.ok) continue;
    if (admitted.keys) keys.set(type, admitted.keys);
    if (admitted.held.size > 0) held.set(type, admitted.held);
  }
  const keyOf = (r: JobRow) => (keys.has(r.type) ? (r.limit_key ?? "") : "");
  return claimGranted(
    held,
    () => claimJobs(store, { ...req, caps, keys }, deps.now(), (leased) => recordPermits(store.sql, leased, held, keyOf)),
    (r) => ({ type: r.type, key: keyOf(r) }),
    deps.giveBack,
  );
}

/** recordPermits: the i-th leased job of a type (and key value) takes the i-th permit of each pool it was granted. */
function recordPermits(sql: SqlStorage, leased: readonly JobRow[], held: ReadonlyMap<string, ReadonlyMap<string, Held[]>>, keyOf: (r: JobRow) => string): void {
  for (const type of new Set(leased.map((r) => r.type))) {
    const steps = held.get(type);
    if (!steps) continue;
    const ofType = leased.filter((r) => r.type === type);
    permitsOf(steps, ofType.map(keyOf)).forEach((permits, i) => {
      for (const p of permits) sql.exec(PERMIT_INSERT, p.pool, p.id, ofType[i]!.seq, ofType[i]!.lease_token!);
    });
  }
}

/** permitsOfLease: the permits the job's attempt under this lease holds, by pool. */
export function permitsOfLease(sql: SqlStorage, id: string, token: string): Map<string, string[]> {
  return byPool(sql.exec<{ pool: string; permit_id: string }>(PERMITS_OF_LEASE, id, token, idSeq(id)).toArray());
}

/** returnable: take every permit no running attempt of its lease holds any more (and no cancel holds), by pool. */
export function returnable(store: HomeStore, now: number): Map<string, string[]> {
  return byPool(store.atomic(() => store.sql.exec<{ pool: string; permit_id: string }>(PERMITS_RETURNABLE, now).toArray()));
}

/** holdPermits: the running job `id` (null: every running job) is about to be cancelled. */
export function holdPermits(sql: SqlStorage, id: string | null): void {
  sql.exec(PERMITS_HOLD, id);
}

/** anyPermits: whether this object holds any pulled attempt's permits. */
export function anyPermits(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM job_permit LIMIT 1").toArray().length > 0;
}

/** holdPermitsOfKeys: the running jobs of `type` under these keys are about to be cancelled. */
export function holdPermitsOfKeys(sql: SqlStorage, type: string, keys: readonly string[]): void {
  sql.exec(PERMITS_HOLD_OF_KEYS, type, JSON.stringify(keys));
}

function byPool(rows: { pool: string; permit_id: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.pool, [...(out.get(r.pool) ?? []), r.permit_id]);
  return out;
}
