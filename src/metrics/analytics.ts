/**
 * Workers Analytics Engine: with `analytics = "<binding>"` in the config,
 * every transition also writes one data point, the Cloudflare-native way to
 * chart a queue over months (query with SQL over the dataset). The layout is
 * a promise to whoever writes those queries:
 *
 * | field   | value                                                              |
 * | ------- | ------------------------------------------------------------------ |
 * | index1  | job type (the sampling key)                                        |
 * | blob1   | job type                                                           |
 * | blob2   | outcome: enqueued, started, completed, retry_scheduled, failed, cancelled |
 * | blob3   | failure kind (failed only), else ""                                |
 * | blob4   | scope type, or "" for unscoped jobs                                |
 * | blob5   | scope id, or ""                                                    |
 * | double1 | duration in ms from the attempt's start (completed, failed), else 0 |
 * | double2 | the attempt number                                                 |
 *
 * `writeDataPoint` does not wait and never throws into the transition.
 *
 * @module
 */
import type { LifecycleEvent } from "../scope/events";

export type Outcome = "enqueued" | "started" | "completed" | "retry_scheduled" | "failed" | "cancelled";

export interface PointSource {
  type: string;
  outcome: Outcome;
  failureKind?: string;
  scope: { type: string; id: string } | null;
  durationMs?: number;
  attempt: number;
}

export function analyticsPoint(p: PointSource): AnalyticsEngineDataPoint {
  return {
    indexes: [p.type],
    blobs: [p.type, p.outcome, p.failureKind ?? "", p.scope?.type ?? "", p.scope?.id ?? ""],
    doubles: [p.durationMs ?? 0, p.attempt],
  };
}

export function eventPoint(e: LifecycleEvent): AnalyticsEngineDataPoint {
  return analyticsPoint({ ...e, outcome: e.event.slice("job:".length) as Outcome });
}

/** writePoints: one data point each; a failing dataset is logged, never thrown (the transition has committed). */
export function writePoints(dataset: AnalyticsEngineDataset, points: readonly AnalyticsEngineDataPoint[]): void {
  try {
    for (const p of points) dataset.writeDataPoint(p);
  } catch (e) {
    console.error(JSON.stringify({ event: "analytics:failed", error: String(e) }));
  }
}
