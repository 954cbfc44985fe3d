/**
 * The summary a scope object sends the catalog: per job type, counts by state
 * (pending split into due and scheduled) and the earliest pending runAt. Built
 * from `job_count` plus one index seek per type, so its cost does not grow
 * with the number of terminal jobs.
 *
 * @module
 */
import type { Usage } from "../metering/usage";
import { FAILURE_KINDS, type FailureKind } from "../job/states";
import type { MinuteCounters } from "../metrics/counters";
import { allCounts } from "./counts";
import { metricsForReport } from "./minute-counters";

export interface TypeSummary {
  type: string;
  pending: number;
  scheduled: number;
  running: number;
  completed: number;
  failed: Record<FailureKind, number>;
  cancelled: number;
  /** Absent from objects still running code older than the superseded state. */
  superseded?: number;
  nextRunAt: number | null;
}

export interface HomeSummary {
  home: string;
  /** Built at, by the home's clock: the catalog keeps the newest. */
  at: number;
  types: TypeSummary[];
  /** Per-minute counters of the minutes that may have changed since the last summary (absolute values); absent from objects still running older code. */
  metrics?: MinuteCounters[];
  /** What the object used since its last summary the catalog took (metering/meter.ts); absent from objects still running older code. */
  usage?: Usage;
}

/** jobNextRunAt: job_due_idx (type, run_at) WHERE pending — one seek. */
const JOB_NEXT_RUN_AT = "SELECT min(run_at) AS t FROM job WHERE state = 'pending' AND type = ?";
/** jobCountScheduled: job_due_idx range scan over the future part only. */
const JOB_COUNT_SCHEDULED = "SELECT count(*) AS n FROM job WHERE state = 'pending' AND type = ? AND run_at > ?";

export function buildSummary(sql: SqlStorage, home: string, now: number, unreportedSince: number | null = null): HomeSummary {
  const byType = new Map<string, TypeSummary>();
  const entry = (type: string): TypeSummary => {
    let s = byType.get(type);
    if (!s) {
      s = { type, pending: 0, scheduled: 0, running: 0, completed: 0, failed: zeroKinds(), cancelled: 0, superseded: 0, nextRunAt: null };
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
    s.nextRunAt = sql.exec<{ t: number | null }>(JOB_NEXT_RUN_AT, s.type).one().t;
    s.scheduled = sql.exec<{ n: number }>(JOB_COUNT_SCHEDULED, s.type, now).one().n;
    s.pending -= s.scheduled;
  }
  return { home, at: now, types: [...byType.values()], metrics: metricsForReport(sql, unreportedSince, now) };
}

export function zeroKinds(): Record<FailureKind, number> {
  return Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
}
