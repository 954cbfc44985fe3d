/**
 * claim: pending → running for the best due jobs of this object, in one
 * synchronous transaction (no await between choosing and leasing, so no other
 * request can interleave and no job is leased twice — invariant 3).
 *
 * Order: priority desc, runAt, enqueue order (seq). job_claim_idx is per type,
 * so the best few of each candidate type are read by index seeks and merged
 * here.
 *
 * @module
 */
import { keyedType } from "../../config/limits";
import { guarded } from "../../pool/permit-plan";
import { LEVEL_JOB, levelsCte } from "./levels";
import { NOT_EXPIRED } from "./expiry";
import { TRANSITIONS } from "../../job/transitions";
import { LIVE_STATES, sqlList } from "../../job/states";
import { jobRows, type JobRow } from "./job-row";
import { payCounts, tallyMoved } from "./tallies";
import { PENDING_UNPAUSED_COUNT, pendingTypes, pendingTypesAll } from "./counts";
import { newLeaseToken, type HomeStore } from "./home-store";
import { leaseKept } from "./pushed-leases";
import { NOT_BEHIND_KEY } from "./not-behind-key";
import { bestDueOfKey } from "./keyed-claim";

export interface ClaimRequest {
  worker: string;
  /** null: any type. */
  types: readonly string[] | null;
  /** Types never to hand out (pull claims skip push types). */
  exclude?: readonly string[];
  limit: number;
  leaseMs: number;
  /** Per type, at most this many (a guarded type: the permits it was granted; scope/pull/pull-permits.ts). */
  caps?: ReadonlyMap<string, number>;
  /** Only jobs carrying at least one of these tags (a pull worker's claim; docs/pull-workers.md). */
  tags?: readonly string[];
  /**
   * A keyed type's jobs (keyed-claim.ts): per type, per key value, at most this many — the permits its key's
   * pools granted. A keyed type not in the map is not claimed.
   */
  keys?: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/**
 * The claim reads job_claim_idx (type, priority DESC, run_at, seq) WHERE
 * pending by seeks only: the highest pending priority of a type, its due jobs
 * in runAt order, then the next lower priority, and so on until `limit` jobs
 * are found. A priority level holding only future jobs costs one seek, so the
 * cost is O(levels visited × log n) whatever the depth.
 */
/** jobTopPendingPriority: one index seek. */
export const JOB_TOP_PENDING_PRIORITY = "SELECT priority FROM job WHERE state = 'pending' AND held = 0 AND type = ? ORDER BY priority DESC LIMIT 1";
/** jobNextPendingPriorityBelow: one index seek. */
export const JOB_NEXT_PENDING_PRIORITY_BELOW =
  "SELECT priority FROM job WHERE state = 'pending' AND held = 0 AND type = ? AND priority < ? ORDER BY priority DESC LIMIT 1";
/**
 * jobClaimCandidates: the due jobs of one (type, priority), oldest first — an
 * index range, no sort (the key is in job_claim_idx, so the follower check
 * reads no row).
 */
export const JOB_CLAIM_CANDIDATES = `
SELECT seq, priority, run_at FROM job AS j
 WHERE j.state = 'pending' AND j.held = 0 AND j.type = ? AND j.priority = ? AND j.run_at <= ?
   AND ${NOT_BEHIND_KEY}
 ORDER BY j.run_at, j.seq
 LIMIT ?`;

/**
 * jobClaimCandidatesTagged: the same range, keeping the jobs that carry one of the tags in ?5 (a JSON array).
 * The tags are not indexed: a tagged claim reads the due jobs of each priority level it visits, tagged or not.
 */
const JOB_CLAIM_CANDIDATES_TAGGED = `
SELECT seq, priority, run_at FROM job AS j
 WHERE j.state = 'pending' AND j.held = 0 AND j.type = ?1 AND j.priority = ?2 AND j.run_at <= ?3
   AND ${NOT_BEHIND_KEY}
   AND EXISTS (SELECT 1 FROM json_each(j.tags) AS t WHERE t.value IN (SELECT value FROM json_each(?5)))
 ORDER BY j.run_at, j.seq
 LIMIT ?4`;

/** jobTagged: whether the job `seq` carries one of the tags in ?2 (JSON). */
const JOB_TAGGED = "SELECT 1 AS tagged FROM job AS j WHERE j.seq = ?1 AND EXISTS (SELECT 1 FROM json_each(j.tags) AS t WHERE t.value IN (SELECT value FROM json_each(?2)))";

/**
 * jobSetRunningIfPending: the claim transition, guarded by state; primary key lookup.
 * Params: ?1 now, ?2 leaseMs, ?3 lease token, ?4 worker, ?5 seq, ?6 lease_kept (pushed-leases.ts). A job with a
 * timeout never gets a lease past `startedAt + timeoutMs`; one past its expiry is not leased (expiry.ts).
 */
export const JOB_SET_RUNNING_IF_PENDING = `
UPDATE job
   SET state = '${TRANSITIONS.claim.to}', attempts = attempts + 1, lease_token = ?3, lease_owner = ?4, lease_ms = ?2, lease_kept = ?6,
       lease_expires_at = CASE WHEN timeout_ms IS NULL THEN ?1 + ?2 ELSE min(?1 + ?2, ?1 + timeout_ms) END,
       started_at = ?1, updated_at = ?1
 WHERE seq = ?5 AND state IN (${sqlList(TRANSITIONS.claim.from)}) AND ${NOT_EXPIRED}
RETURNING *`;

/**
 * jobSetRunningMany: the claim transition for a whole claim in one statement (one call into SQLite, not
 * one per job), counted in bulk (tallies.ts: it bumps `tally`). Params ?1 now, ?2 leaseMs, ?3 worker, ?4 JSON [[seq, leaseToken], …],
 * ?5 lease_kept (pushed-leases.ts). RETURNING comes in no set order: the caller puts the rows back in claim order.
 */
const JOB_SET_RUNNING_MANY = `
UPDATE job
   SET state = '${TRANSITIONS.claim.to}', attempts = attempts + 1, lease_token = v.value ->> 1, lease_owner = ?3, lease_ms = ?2, tally = tally + 1,
       lease_kept = ?5,
       lease_expires_at = CASE WHEN timeout_ms IS NULL THEN ?1 + ?2 ELSE min(?1 + ?2, ?1 + timeout_ms) END,
       started_at = ?1, updated_at = ?1
  FROM json_each(?4) AS v
 WHERE job.seq = v.value ->> 0 AND job.state IN (${sqlList(TRANSITIONS.claim.from)}) AND ${NOT_EXPIRED}
RETURNING *`;

type Candidate = {
  seq: number;
  priority: number;
  run_at: number;
};

/** claimJobs: lease the best due jobs; `within` runs in the same transaction with what was leased. */
export function claimJobs(store: HomeStore, req: ClaimRequest, now: number, within?: (leased: JobRow[]) => void): JobRow[] {
  return store.atomic(() => {
    const present = pendingTypes(store.sql);
    const types = (req.types === null ? present : [...new Set(req.types)].filter((t) => present.includes(t))).filter(
      (t) => !req.exclude?.includes(t),
    );
    const candidates: Candidate[] = [];
    const tags = req.tags && req.tags.length > 0 ? JSON.stringify(req.tags) : null;
    for (const type of types) {
      // A batch type hands out at most a batch per claim: a pull worker runs the jobs of one claim in one call (docs/handlers.md).
      const rule = oneAtATime(store, type, now, Math.min(req.limit, req.caps?.get(type) ?? Infinity, store.config.typeSettings(type).batch?.maxSize ?? Infinity));
      if (rule.limit <= 0) continue;
      // Keyed and guarded: only the key values granted, each up to its grant. A keyed type no limit guards (a batch's
      // key alone) is claimed as any other: its key only groups a batch's calls (docs/handlers.md "Batch handlers").
      // A guarded keyed type without a grant (a claim that did not ask its pools for it) takes nothing.
      if (keyedType(store.config, type) && (req.keys?.has(type) || guarded(store.config, type))) {
        let room = rule.limit;
        for (const [key, cap] of req.keys?.get(type) ?? []) {
          if (room <= 0) break;
          const got = bestDueOfKey(store.sql, type, key, Math.min(cap, room), now, tags);
          candidates.push(...got);
          room -= got.length;
        }
        continue;
      }
      // A one-at-a-time type's head is its only candidate: untagged, it holds the rest back from this claim too.
      if (rule.head) {
        if (tags === null || store.sql.exec(JOB_TAGGED, rule.head.seq, tags).toArray().length > 0) candidates.push(rule.head);
      } else candidates.push(...bestDue(store.sql, type, rule.limit, now, tags));
    }
    if (types.length > 1) candidates.sort((a, b) => b.priority - a.priority || a.run_at - b.run_at || a.seq - b.seq);
    const picked = candidates.slice(0, req.limit);
    // A pushed claim (of one type) holds its leases in memory unless the type runs one at a time (pushed-leases.ts).
    const kept = leaseKept(req.worker, types.some((t) => isSerial(store, t)));
    let claimed: JobRow[] = [];
    if (picked.length === 1) {
      claimed = jobRows(store.sql.exec(JOB_SET_RUNNING_IF_PENDING, now, req.leaseMs, newLeaseToken(), req.worker, picked[0]!.seq, kept));
    } else if (picked.length > 1) {
      const order = new Map(picked.map((c, i) => [c.seq, i]));
      const leases = JSON.stringify(picked.map((c) => [c.seq, newLeaseToken()]));
      claimed = jobRows(store.sql.exec(JOB_SET_RUNNING_MANY, now, req.leaseMs, req.worker, leases, kept));
      tallyMoved(store, claimed, TRANSITIONS.claim.from[0], TRANSITIONS.claim.to, "started", now);
      claimed.sort((a, b) => order.get(a.seq)! - order.get(b.seq)!);
    }
    if (claimed.length > 0) store.touched(now);
    within?.(claimed);
    return claimed;
  });
}

/**
 * jobRunningLiveOfType: job_lease_idx (lease_expires_at) WHERE running, live leases only. A one-at-a-time type's
 * leases always have an entry (pushed-leases.ts).
 */
const JOB_RUNNING_LIVE_OF_TYPE = "SELECT 1 AS live FROM job WHERE state = 'running' AND lease_kept = 1 AND lease_expires_at > ?2 AND type = ?1 LIMIT 1";

/** isSerial: one job of the type at a time here — serialized by scope (in a scope object), or ordered (in any object). */
export function isSerial(store: HomeStore, type: string): boolean {
  const t = store.config.typeSettings(type);
  return t.ordered || (store.scoped && t.serializeByScope);
}

function isOrdered(store: HomeStore, type: string): boolean {
  return store.config.typeSettings(type).ordered;
}

/** jobOldestLive: job_ordered_live_idx (type, seq) WHERE ordered and live — one seek (ordered-repair.ts). */
const JOB_OLDEST_LIVE = `
SELECT seq, priority, run_at, state, ${NOT_BEHIND_KEY} AS free FROM job AS j
 WHERE j.type = ? AND j.ordered = 1 AND j.state IN (${sqlList(LIVE_STATES)}) ORDER BY j.seq LIMIT 1`;

/**
 * orderedHead: an ordered type's next job, or null. Only the oldest live job of the type may run, when it is
 * pending and due: one running (its lease lapsed or not), waiting (waits.ts), backing off after a failed attempt,
 * or delayed, holds every later one — priority and runAt do not reorder an ordered type.
 */
export function orderedHead(sql: SqlStorage, type: string, now: number): Candidate | null {
  const head = sql.exec<Candidate & { state: string; free: number }>(JOB_OLDEST_LIVE, type).toArray()[0];
  // A head waiting behind its key's running job (of another type) waits, as any follower does.
  if (!head || head.state !== "pending" || head.run_at > now || !head.free) return null;
  return { seq: head.seq, priority: head.priority, run_at: head.run_at };
}

/** serialBusy: a job of the type holds a live lease here, so no other may start. */
function serialBusy(sql: SqlStorage, type: string, now: number): boolean {
  return sql.exec(JOB_RUNNING_LIVE_OF_TYPE, type, now).toArray().length > 0;
}

/** bestDue: up to `limit` due jobs of one type in claim order, priority level by priority level. */
function bestDue(sql: SqlStorage, type: string, limit: number, now: number, tags: string | null = null): Candidate[] {
  const out: Candidate[] = [];
  let level = sql.exec<{ priority: number }>(JOB_TOP_PENDING_PRIORITY, type).toArray()[0]?.priority;
  while (level !== undefined && out.length < limit) {
    const page =
      tags === null
        ? sql.exec<Candidate>(JOB_CLAIM_CANDIDATES, type, level, now, limit - out.length)
        : sql.exec<Candidate>(JOB_CLAIM_CANDIDATES_TAGGED, type, level, now, limit - out.length, tags);
    out.push(...page.toArray());
    if (out.length >= limit) break;
    level = sql.exec<{ priority: number }>(JOB_NEXT_PENDING_PRIORITY_BELOW, type, level).toArray()[0]?.priority;
  }
  return out;
}

/** typeRunning: the type's count row says a job of it runs here (pushed leases have no job_lease_idx entry). */
const JOB_RUNNING_OF_TYPE = "SELECT 1 AS running FROM type_count WHERE type = ? AND running > 0";
/**
 * jobCountDue: per priority level (levels.ts), the due range of job_claim_idx, stopped at `limit`. A follower
 * waiting behind its key's running job is not due yet (that job's end fills again) — counting it would keep
 * asking the alarm for "now".
 */
const JOB_COUNT_DUE = `
WITH RECURSIVE ${levelsCte("SELECT ?1 AS type")}
SELECT count(*) AS n FROM (
  SELECT 1 FROM lv, job AS j
   WHERE lv.p IS NOT NULL AND ${LEVEL_JOB} AND j.run_at <= ?2 AND ${NOT_BEHIND_KEY}
   LIMIT ?3)`;

/** jobDueExists: whether one is due — the same seeks, without the counting subquery (it costs twice as much per call). */
const JOB_DUE_EXISTS = `
WITH RECURSIVE ${levelsCte("SELECT ?1 AS type")}
SELECT EXISTS (
  SELECT 1 FROM lv, job AS j
   WHERE lv.p IS NOT NULL AND ${LEVEL_JOB} AND j.run_at <= ?2 AND ${NOT_BEHIND_KEY}) AS n`;

/**
 * jobDueTypesAmong: of the types given (JSON), those with a due job here that no running job of its key holds
 * back, paused ones left out — one statement for what pendingTypes and a seek per type would ask (the
 * dispatcher asks it after every write). A one-at-a-time type needs countStartable as well. A scalar subquery, not
 * EXISTS: this SQLite turned the EXISTS into a join that read every due job (600 rows for 900 due; test/scope/levels.test.ts).
 * The list is matched as text — `,"a","b",` searched for `,"<type>",`, whole elements only (a quote after a comma
 * is never inside a JSON string) — not read through json_each:
 * the object's own type_count rows are walked (the types it holds, which the wake-up walks anyway), and every row of
 * a json_each over the configured pushed types was a row read after every write — most of a pushed job's reads
 * (370 of a single job's, to 64: docs/design.md "What a job costs"; test/scope/levels.test.ts).
 */
const JOB_DUE_TYPES_AMONG = `
WITH RECURSIVE ${levelsCte(`SELECT c.type FROM type_count AS c WHERE ${PENDING_UNPAUSED_COUNT} AND instr(',' || substr(?1, 2, length(?1) - 2) || ',', ',' || json_quote(c.type) || ',') > 0`)}
SELECT lv.type FROM lv
 WHERE lv.p IS NOT NULL AND (SELECT 1 FROM job AS j WHERE ${LEVEL_JOB} AND j.run_at <= ?2 AND ${NOT_BEHIND_KEY} LIMIT 1)
 GROUP BY lv.type`;

/** jobOldestDue: per priority level (levels.ts), the first due run_at on job_claim_idx; the earliest of them. */
const JOB_OLDEST_DUE = `
WITH RECURSIVE ${levelsCte("SELECT ?1 AS type")}
SELECT min((SELECT min(j.run_at) FROM job AS j WHERE ${LEVEL_JOB} AND j.run_at <= ?2)) AS t FROM lv WHERE lv.p IS NOT NULL`;

/** oldestDue: when the type's longest-due job here came due, or null (a batch's gathering: dispatch/batch-take.ts). */
export function oldestDue(sql: SqlStorage, type: string, now: number): number | null {
  return sql.exec<{ t: number | null }>(JOB_OLDEST_DUE, type, now).one().t;
}

/** dueTypesAmong: the types of `types` with a due job here not held behind its key (one-at-a-time rules aside). */
export function dueTypesAmong(sql: SqlStorage, types: readonly string[], now: number): string[] {
  if (types.length === 0) return [];
  return sql.exec<{ type: string }>(JOB_DUE_TYPES_AMONG, JSON.stringify(types), now).toArray().map((r) => r.type);
}

/** countDue: due jobs of the type here, counted up to `limit`. The dispatcher asks with limit 1 after every write. */
export function countDue(sql: SqlStorage, type: string, now: number, limit: number): number {
  if (limit === 1) return sql.exec<{ n: number }>(JOB_DUE_EXISTS, type, now).one().n;
  return sql.exec<{ n: number }>(JOB_COUNT_DUE, type, now, limit).one().n;
}

/**
 * oneAtATime: the one-at-a-time rules, the one place they are written. A one-at-a-time type (serializeByScope
 * in a scope's object, ordered) starts none while one of it holds a live lease here (this object holds the
 * whole scope, so the rule is local and exact; a running row whose lease expired is about to be reaped and
 * blocks nothing), and at most one otherwise; an ordered type only its head, which `head` names (limit 0 when
 * the head may not start). `limit` is the caller's; any other type keeps it.
 */
function oneAtATime(store: HomeStore, type: string, now: number, limit: number): { limit: number; head?: Candidate } {
  if (!isSerial(store, type)) return { limit };
  if (serialBusy(store.sql, type, now)) return { limit: 0 };
  if (!isOrdered(store, type)) return { limit: Math.min(limit, 1) };
  const head = orderedHead(store.sql, type, now);
  return head && limit > 0 ? { limit: 1, head } : { limit: 0 };
}

/**
 * countStartable: how many of the type may start here now, up to `limit`: its due jobs, under oneAtATime.
 * The dispatcher's due types and guarded claims, and pull claims' permits, ask this.
 */
export function countStartable(store: HomeStore, type: string, now: number, limit: number): number {
  const rule = oneAtATime(store, type, now, limit);
  if (rule.limit <= 0 || rule.head) return rule.limit;
  return countDue(store.sql, type, now, rule.limit);
}

/** mayStart: whether the pending, due job `seq` of `type` may start now under oneAtATime (an inline claim). */
export function mayStart(store: HomeStore, type: string, seq: number, now: number): boolean {
  const rule = oneAtATime(store, type, now, 1);
  return rule.limit > 0 && (rule.head === undefined || rule.head.seq === seq);
}

/** busyHere: the first of the types with due or running work in this object (waitsFor's exact, local half), or null. */
export function busyHere(store: HomeStore, types: readonly string[], now: number): string | null {
  // It reads the running counts: what is owed is written first (count-debt.ts).
  payCounts(store);
  const { sql } = store;
  const present = pendingTypesAll(sql);
  for (const t of types) {
    if (present.includes(t) && (countDue(sql, t, now, 1) > 0 || store.pushed.held.due(now, t).length > 0)) return t;
    if (sql.exec(JOB_RUNNING_OF_TYPE, t).toArray().length > 0) return t;
  }
  return null;
}
