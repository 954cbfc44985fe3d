/**
 * Workers Analytics Engine: with `analytics = "<binding>"` in the config,
 * transitions also write data points, the Cloudflare-native way to chart a
 * queue over months (query with SQL over the dataset). The jobs of one call
 * (an enqueue batch, a claim, a dispatch's settles) that share type, outcome,
 * failure kind and scope make one point — the platform takes at most 250
 * points per invocation, and a batch enqueue is up to 1,000 jobs. The layout
 * is a promise to whoever writes those queries:
 *
 * | field   | value                                                              |
 * | ------- | ------------------------------------------------------------------ |
 * | index1  | job type, cut to 96 bytes (the index limit; the sampling key)       |
 * | blob1   | job type                                                           |
 * | blob2   | outcome: enqueued, started, completed, retry_scheduled, waiting, failed, cancelled, superseded, expired, released, lease_lost |
 * | blob3   | failure kind (failed only), else ""                                |
 * | blob4   | scope type, or "" for unscoped jobs                                |
 * | blob5   | scope id, or ""                                                    |
 * | double1 | summed duration in ms from each attempt's start (completed, failed), else 0 |
 * | double2 | the highest attempt number among the jobs                          |
 * | double3 | how many jobs the point stands for                                 |
 *
 * Count with `SUM(_sample_interval * double3)`. `writeDataPoint` does not
 * wait, and a failure is logged, never thrown into the transition.
 *
 * @module
 */
import type { LifecycleEvent } from "../scope/watching/events";

export type Outcome = "enqueued" | "started" | "completed" | "retry_scheduled" | "waiting" | "failed" | "cancelled" | "superseded" | "expired" | "released" | "lease_lost";

export interface PointSource {
  type: string;
  outcome: Outcome;
  failureKind?: string;
  scope: { type: string; id: string } | null;
  durationMs?: number;
  attempt: number;
}

const INDEX_MAX_BYTES = 96;

/** analyticsPoints: one point per group of sources alike in type, outcome, kind and scope. */
export function analyticsPoints(sources: readonly PointSource[]): AnalyticsEngineDataPoint[] {
  const groups = new Map<string, { blobs: string[]; duration: number; attempt: number; count: number; index: string }>();
  for (const p of sources) {
    const blobs = [p.type, p.outcome, p.failureKind ?? "", p.scope?.type ?? "", p.scope?.id ?? ""];
    const key = JSON.stringify(blobs);
    const g = groups.get(key) ?? { blobs, duration: 0, attempt: 0, count: 0, index: cutUtf8(p.type, INDEX_MAX_BYTES) };
    g.duration += p.durationMs ?? 0;
    g.attempt = Math.max(g.attempt, p.attempt);
    g.count++;
    groups.set(key, g);
  }
  return [...groups.values()].map((g) => ({ indexes: [g.index], blobs: g.blobs, doubles: [g.duration, g.attempt, g.count] }));
}

export function eventSource(e: LifecycleEvent): PointSource {
  return { ...e, outcome: e.event.slice("job:".length) as Outcome };
}

/** writePoints: each point on its own, so one refused point does not drop the rest; failures are logged, never thrown. */
export function writePoints(dataset: AnalyticsEngineDataset, points: readonly AnalyticsEngineDataPoint[]): void {
  for (const p of points) {
    try {
      dataset.writeDataPoint(p);
    } catch (e) {
      console.error(JSON.stringify({ event: "analytics:failed", error: String(e) }));
    }
  }
}

/** cutUtf8: the longest prefix of `s` within `max` UTF-8 bytes, never splitting a character. */
function cutUtf8(s: string, max: number): string {
  let bytes = 0;
  let out = "";
  for (const ch of s) {
    const n = new TextEncoder().encode(ch).length;
    if (bytes + n > max) break;
    bytes += n;
    out += ch;
  }
  return out;
}
