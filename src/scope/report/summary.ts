/**
 * The summary a scope object sends the catalog: per job type, counts by state
 * (pending split into due and scheduled) and the earliest pending runAt. Built
 * from `job_count` plus one index seek per type, so its cost does not grow
 * with the number of terminal jobs.
 *
 * @module
 */
import { LEVEL_JOB, levelsCte } from "../jobs/levels";
import type { UsageReport } from "../../metering/usage";
import { FAILURE_KINDS, type FailureKind } from "../../job/states";
import type { MinuteCounters } from "../../metrics/counters";
import { allCounts } from "../jobs/counts";
import { payCounts } from "../jobs/tallies";
import type { HomeStore } from "../jobs/home-store";
import { metricsForReport } from "./minute-counters";

export interface TypeSummary {
  type: string;
  pending: number;
  scheduled: number;
  running: number;
  completed: number;
  /** `nondeterminism` is absent from objects still running code older than that kind (src/job/states.ts). */
  failed: Record<Exclude<FailureKind, "nondeterminism">, number> & { nondeterminism?: number };
  cancelled: number;
  /** Absent from objects still running code older than the superseded state. */
  superseded?: number;
  /** Absent from objects still running code older than the waiting state (docs/workflows.md). */
  waiting?: number;
  /** Absent from objects still running code older than the expired state (docs/guards.md "Expiry before start"). */
  expired?: number;
  nextRunAt: number | null;
}

export interface HomeSummary {
  home: string;
  /** Built at, by the home's clock: the catalog keeps the newest. */
  at: number;
  types: TypeSummary[];
  /** Per-minute counters of the minutes that may have changed since the last summary (absolute values); absent from objects still running older code. */
  metrics?: MinuteCounters[];
  /**
   * What the object's instance used since it began (metering/meter.ts `report`): the catalog adds what grew. A summary
   * of 0.1.0 carried a delta instead, which the catalog ignores (a deploy's few seconds of scope usage go uncounted).
   */
  usage?: UsageReport;
}

/**
 * jobNextRunAtAndScheduled: per priority level (levels.ts), one seek for its first run_at and a range count of
 * its future part only, on job_claim_idx.
 */
const JOB_NEXT_RUN_AT_AND_SCHEDULED = `
WITH RECURSIVE ${levelsCte("SELECT ?1 AS type")}
SELECT min((SELECT min(j.run_at) FROM job AS j WHERE ${LEVEL_JOB})) AS t,
       coalesce(sum((SELECT count(*) FROM job AS j WHERE ${LEVEL_JOB} AND j.run_at > ?2)), 0) AS n
  FROM lv WHERE lv.p IS NOT NULL`;

export function buildSummary(store: HomeStore, home: string, now: number, unreportedSince: number | null = null): HomeSummary {
  // The counts owed are written first: a summary reads them (jobs/count-debt.ts).
  payCounts(store);
  const { sql } = store;
  const byType = new Map<string, TypeSummary>();
  const entry = (type: string): TypeSummary => {
    let s = byType.get(type);
    if (!s) {
      s = { type, pending: 0, scheduled: 0, running: 0, completed: 0, failed: zeroKinds(), cancelled: 0, superseded: 0, waiting: 0, expired: 0, nextRunAt: null };
      byType.set(type, s);
    }
    return s;
  };
  for (const c of allCounts(sql)) {
    const s = entry(c.type);
    if (c.state === "failed") {
      if (c.failure_kind !== "") s.failed[c.failure_kind] += c.n;
    } else s[c.state] = (s[c.state] ?? 0) + c.n;
  }
  for (const s of byType.values()) {
    if (s.pending === 0) continue;
    const { t, n } = sql.exec<{ t: number | null; n: number }>(JOB_NEXT_RUN_AT_AND_SCHEDULED, s.type, now).one();
    // Retries held in memory have no claim index entry (jobs/held-retries.ts): their times are counted from memory.
    const held = store.pushed.held.ofType(s.type, now);
    s.nextRunAt = held.first === null ? t : t === null ? held.first : Math.min(t, held.first);
    // Memory may hold a stale entry for a moment (a hold whose transaction rolled back): never more than is pending.
    s.scheduled = Math.min(s.pending, n + held.later);
    s.pending -= s.scheduled;
  }
  return { home, at: now, types: [...byType.values()], metrics: metricsForReport(sql, unreportedSince, now) };
}

export function zeroKinds(): Record<FailureKind, number> {
  return Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
}
