/**
 * The catalog's operations over its SQLite: take a home's summary, rank homes
 * for a fair pull claim, add up stats, and page through homes for listing and
 * prune. Plain functions over SqlStorage so tests can run them directly.
 *
 * @module
 */
import type { Stats } from "../job/schemas";
import type { JobState, TerminalState } from "../job/states";
import type { HomeSummary, TypeSummary } from "../scope/report/summary";
import { applyMetrics } from "./metrics-store";

const HOME_REPORTED_AT = "SELECT reported_at FROM home WHERE name = ?";
const HOME_UPSERT = `
INSERT INTO home (name, reported_at, last_served_at) VALUES (?1, ?2, 0)
ON CONFLICT (name) DO UPDATE SET reported_at = excluded.reported_at`;
const HOME_DELETE = "DELETE FROM home WHERE name = ?";
const HOME_TYPE_DELETE = "DELETE FROM home_type WHERE home = ?";
/** homeTypeDropOthers: the home's rows of types its summary no longer has. Deleting writes only what it deletes. */
const HOME_TYPE_DROP_OTHERS = "DELETE FROM home_type WHERE home = ?1 AND type NOT IN (SELECT value FROM json_each(?2))";
const HOME_TYPE_COLUMNS = [
  "pending", "scheduled", "running", "completed", "failed_retries_exhausted", "failed_fatal", "failed_stalled", "failed_timeout", "failed_nondeterminism", "cancelled",
  "superseded", "waiting", "expired", "next_run_at",
] as const;
/**
 * homeTypeUpsert: a type's row as the summary has it. A new row writes its three index entries; a changed one only
 * itself, and its index entries only when `next_run_at` moved; an unchanged one nothing (the WHERE). Before, every
 * summary deleted the home's rows and inserted them again: four rows written per type per summary.
 */
const HOME_TYPE_UPSERT = `
INSERT INTO home_type (home, type, ${HOME_TYPE_COLUMNS.join(", ")})
VALUES (?, ?, ${HOME_TYPE_COLUMNS.map(() => "?").join(", ")})
ON CONFLICT (home, type) DO UPDATE SET ${HOME_TYPE_COLUMNS.map((c) => `${c} = excluded.${c}`).join(", ")}
 WHERE (${HOME_TYPE_COLUMNS.join(", ")}) IS NOT (${HOME_TYPE_COLUMNS.map((c) => `excluded.${c}`).join(", ")})`;

/** applyReport replaces what the catalog knows of one home; an older summary than the one held is ignored. */
export function applyReport(sql: SqlStorage, summary: HomeSummary): boolean {
  const held = sql.exec<{ reported_at: number }>(HOME_REPORTED_AT, summary.home).toArray()[0];
  if (held && held.reported_at > summary.at) return false;
  applyMetrics(sql, summary.home, summary.metrics ?? [], summary.at);
  const kept = summary.types.filter(hasAny);
  if (kept.length === 0) {
    sql.exec(HOME_TYPE_DELETE, summary.home);
    sql.exec(HOME_DELETE, summary.home);
    return true;
  }
  sql.exec(HOME_TYPE_DROP_OTHERS, summary.home, JSON.stringify(kept.map((t) => t.type)));
  sql.exec(HOME_UPSERT, summary.home, summary.at);
  for (const t of kept) {
    sql.exec(
      HOME_TYPE_UPSERT,
      summary.home,
      t.type,
      t.pending,
      t.scheduled,
      t.running,
      t.completed,
      t.failed.retries_exhausted,
      t.failed.fatal,
      t.failed.stalled,
      t.failed.timeout,
      // A home older than the kind sends none.
      t.failed.nondeterminism ?? 0,
      t.cancelled,
      t.superseded ?? 0,
      t.waiting ?? 0,
      t.expired ?? 0,
      t.nextRunAt,
    );
  }
  return true;
}

function hasAny(t: TypeSummary): boolean {
  const failed = t.failed.retries_exhausted + t.failed.fatal + t.failed.stalled + t.failed.timeout + (t.failed.nondeterminism ?? 0);
  return t.pending + t.scheduled + t.running + t.completed + failed + t.cancelled + (t.superseded ?? 0) + (t.waiting ?? 0) + (t.expired ?? 0) > 0;
}

/**
 * homeDueForClaim: due (home, type) rows of the given types (json array, or
 * NULL for any), oldest due first, walking home_type_next_idx in order and
 * stopping at the limit — a claim's cost does not grow with the number of due
 * homes (a GROUP BY over them did: 436 picks/s at 11,000 due homes). A home
 * with several due types comes once per type; the caller keeps its first.
 * A read: a claim writes nothing here (ServedHomes keeps who was served).
 */
const HOME_DUE_FOR_CLAIM = `
SELECT t.home AS home, t.next_run_at AS due FROM home_type t INDEXED BY home_type_next_idx
 WHERE t.next_run_at <= ?1 AND (?2 IS NULL OR t.type IN (SELECT value FROM json_each(?2)))
   AND t.type NOT IN (SELECT value FROM json_each(?4))
 ORDER BY t.next_run_at
 LIMIT ?3`;
/** homeDueForClaimOfType: the same for one type, along home_type_type_idx (type, next_run_at). */
const HOME_DUE_FOR_CLAIM_OF_TYPE = `
SELECT t.home AS home, t.next_run_at AS due FROM home_type t INDEXED BY home_type_type_idx
 WHERE t.type = ?2 AND t.next_run_at <= ?1
 ORDER BY t.next_run_at
 LIMIT ?3`;

/** How many due homes a pick reads per home it returns: room for recently served ones to step back. */
const PICK_READ_FACTOR = 4;
/** ServedHomes forgets a home served this long ago: by then its oldest due job decides its place alone. */
const SERVED_MEMORY_MS = 60_000;
const SERVED_MAX = 10_000;

/**
 * ServedHomes: when each home was last sent a claim, in this catalog
 * instance's memory — not in SQLite, so a pull claim costs the catalog no
 * write. Lost with the instance, it only resets who steps back next.
 */
export class ServedHomes {
  private readonly at = new Map<string, number>();

  get(home: string): number {
    return this.at.get(home) ?? 0;
  }

  mark(homes: readonly string[], now: number): void {
    for (const h of homes) {
      this.at.delete(h); // re-inserted last: the map stays in serve order, oldest first
      this.at.set(h, now);
    }
    if (this.at.size <= SERVED_MAX) return;
    for (const [h, t] of this.at) {
      if (this.at.size <= SERVED_MAX && now - t < SERVED_MEMORY_MS) break;
      this.at.delete(h);
    }
  }
}

/**
 * pickHomesForClaim returns up to `limit + spare` homes, best first, and marks
 * the first `limit` as served now. "Best" is the one that has waited longest,
 * measured from the later of its oldest due job and the last time a claim was
 * sent there, so a tenant with 10,000 jobs is served, then steps back behind a
 * tenant with one. The spares are fallbacks for a home whose summary is a
 * moment stale (it was emptied by a claim whose report is still on its way);
 * they keep their place in line. `exclude` (pushed types) keeps an untyped
 * claim from ranking homes whose due work it cannot take.
 */
export function pickHomesForClaim(
  sql: SqlStorage,
  served: ServedHomes,
  types: readonly string[] | null,
  exclude: readonly string[],
  limit: number,
  spare: number,
  now: number,
  mark = true,
): { home: string; waited: number }[] {
  const want = limit + spare;
  const rows =
    types !== null && types.length === 1 && !exclude.includes(types[0]!)
      ? sql.exec<{ home: string; due: number }>(HOME_DUE_FOR_CLAIM_OF_TYPE, now, types[0]!, want * PICK_READ_FACTOR).toArray()
      : sql.exec<{ home: string; due: number }>(HOME_DUE_FOR_CLAIM, now, types === null ? null : JSON.stringify(types), want * PICK_READ_FACTOR, JSON.stringify(exclude)).toArray();
  const seen = new Set<string>();
  const ranked = rows
    .filter((r) => !seen.has(r.home) && seen.add(r.home))
    .map((r) => ({ home: r.home, waited: Math.max(r.due, served.get(r.home)) }))
    .sort((a, b) => a.waited - b.waited || (a.home < b.home ? -1 : a.home > b.home ? 1 : 0))
    .slice(0, want);
  // A sharded catalog marks only the homes its merge kept (catalog/shards.ts), afterwards.
  if (mark) served.mark(ranked.slice(0, limit).map((r) => r.home), now);
  return ranked;
}

/** The stats columns, summed over the rows of home_type a query groups. */
const STATS_COLUMNS = `
coalesce(sum(pending), 0) AS pending, coalesce(sum(scheduled), 0) AS scheduled, coalesce(sum(running), 0) AS running,
coalesce(sum(completed), 0) AS completed, coalesce(sum(failed_retries_exhausted), 0) AS retries_exhausted,
coalesce(sum(failed_fatal), 0) AS fatal, coalesce(sum(failed_stalled), 0) AS stalled,
coalesce(sum(failed_timeout), 0) AS timeout, coalesce(sum(failed_nondeterminism), 0) AS nondeterminism, coalesce(sum(cancelled), 0) AS cancelled, coalesce(sum(superseded), 0) AS superseded,
coalesce(sum(waiting), 0) AS waiting, coalesce(sum(expired), 0) AS expired, min(CASE WHEN next_run_at <= ?2 THEN next_run_at END) AS oldest_due`;

const STATS = `SELECT ${STATS_COLUMNS} FROM home_type WHERE ?1 IS NULL OR type = ?1`;
/** statsByType: every type any home holds, or one (a full scan of home_type: O(homes × types), for the dashboard and metrics). */
const STATS_BY_TYPE = `SELECT type, ${STATS_COLUMNS} FROM home_type WHERE ?1 IS NULL OR type = ?1 GROUP BY type ORDER BY type`;
/** homeBusiest: homes by live jobs, most first (a full scan plus sort, like statsByType). STATS_COLUMNS reads ?2; ?1 is unused. */
const HOME_BUSIEST = `
SELECT home, ${STATS_COLUMNS} FROM home_type
 GROUP BY home ORDER BY sum(pending) + sum(scheduled) + sum(running) + sum(waiting) DESC, home LIMIT ?3`;

type StatsRow = {
  pending: number;
  scheduled: number;
  running: number;
  completed: number;
  retries_exhausted: number;
  fatal: number;
  stalled: number;
  timeout: number;
  nondeterminism: number;
  cancelled: number;
  superseded: number;
  waiting: number;
  expired: number;
  oldest_due: number | null;
};

function toStats(r: StatsRow, now: number): Stats {
  return {
    pending: r.pending,
    scheduled: r.scheduled,
    running: r.running,
    completed: r.completed,
    failed: r.retries_exhausted + r.fatal + r.stalled + r.timeout + r.nondeterminism,
    cancelled: r.cancelled,
    superseded: r.superseded,
    waiting: r.waiting,
    expired: r.expired,
    oldestPendingLagMs: r.oldest_due === null ? 0 : Math.max(0, now - r.oldest_due),
    failedByKind: { retries_exhausted: r.retries_exhausted, fatal: r.fatal, stalled: r.stalled, timeout: r.timeout, nondeterminism: r.nondeterminism },
  };
}

export function stats(sql: SqlStorage, type: string | null, now: number): Stats {
  return toStats(sql.exec<StatsRow>(STATS, type, now).one(), now);
}

export function statsByType(sql: SqlStorage, type: string | null, now: number): (Stats & { type: string })[] {
  return sql
    .exec<StatsRow & { type: string }>(STATS_BY_TYPE, type, now)
    .toArray()
    .map((r) => ({ type: r.type, ...toStats(r, now) }));
}

export function busiestHomes(sql: SqlStorage, limit: number, now: number): (Stats & { home: string })[] {
  return sql
    .exec<StatsRow & { home: string }>(HOME_BUSIEST, null, now, limit)
    .toArray()
    .map((r) => ({ home: r.home, ...toStats(r, now) }));
}

/** typeBusy: a type of the list with due or running work in any home (waitsFor), per the summaries held. */
const TYPE_BUSY = "SELECT type FROM home_type WHERE type IN (SELECT value FROM json_each(?1)) AND (running > 0 OR next_run_at <= ?2) LIMIT 1";

export function busyType(sql: SqlStorage, types: readonly string[], now: number): string | null {
  return sql.exec<{ type: string }>(TYPE_BUSY, JSON.stringify(types), now).toArray()[0]?.type ?? null;
}

/** homeListAfter: homes in name order after `after` (or from it, when inclusive), holding jobs of any of the types in any of the states asked for (JSON arrays). */
const HOME_LIST_AFTER = `
SELECT DISTINCT home FROM home_type
 WHERE (home > ?1 OR (?2 AND home = ?1))
   AND (?3 IS NULL OR type IN (SELECT value FROM json_each(?3)))
   AND (?4 IS NULL OR EXISTS (SELECT 1 FROM json_each(?4) AS s WHERE CASE s.value
         WHEN 'pending' THEN pending + scheduled
         WHEN 'running' THEN running
         WHEN 'waiting' THEN waiting
         WHEN 'completed' THEN completed
         WHEN 'failed' THEN failed_retries_exhausted + failed_fatal + failed_stalled + failed_timeout + failed_nondeterminism
         WHEN 'cancelled' THEN cancelled
         WHEN 'superseded' THEN superseded
         WHEN 'expired' THEN expired END > 0))
 ORDER BY home
 LIMIT ?5`;

/** HomeFilter: homes holding jobs of any of `types` (all when absent) in any of `states` (all when absent). */
export interface HomeFilter {
  types?: readonly string[];
  states?: readonly JobState[];
}

export function listHomes(sql: SqlStorage, filter: HomeFilter, after: string, inclusive: boolean, limit: number): string[] {
  const list = (v: readonly string[] | undefined) => (v === undefined ? null : JSON.stringify(v));
  return sql
    .exec<{ home: string }>(HOME_LIST_AFTER, after, inclusive ? 1 : 0, list(filter.types), list(filter.states), limit)
    .toArray()
    .map((r) => r.home);
}

/** homeListWithTerminal: homes holding terminal jobs of any of the states (for prune), in name order after `after`. */
const HOME_LIST_WITH_TERMINAL = `
SELECT DISTINCT home FROM home_type
 WHERE home > ?1
   AND ((?2 AND completed > 0) OR (?3 AND failed_retries_exhausted + failed_fatal + failed_stalled + failed_timeout + failed_nondeterminism > 0)
        OR (?4 AND cancelled > 0) OR (?6 AND superseded > 0) OR (?7 AND expired > 0))
 ORDER BY home
 LIMIT ?5`;

export function listHomesWithTerminal(sql: SqlStorage, states: readonly TerminalState[], after: string, limit: number): string[] {
  const has = (s: TerminalState) => (states.includes(s) ? 1 : 0);
  return sql
    .exec<{ home: string }>(HOME_LIST_WITH_TERMINAL, after, has("completed"), has("failed"), has("cancelled"), limit, has("superseded"), has("expired"))
    .toArray()
    .map((r) => r.home);
}
