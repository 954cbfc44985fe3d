/** The test handler Worker's Probe entrypoint: what ran, how often, and the observer's events. */
import { env } from "cloudflare:workers";

export interface Span {
  id: string;
  key: string;
  startedAt: number;
  finishedAt: number;
  aborted: string | null;
}

interface ProbeApi {
  spans(key: string): Promise<Span[]>;
  invocations(id: string): Promise<number>;
  stepRuns(id: string): Promise<Record<string, number>>;
  open(id: string): Promise<void>;
  random(values: number[]): Promise<void>;
  deploy(code: "old" | "patched" | "naive"): Promise<void>;
  events(id: string): Promise<{ event: string; attempt: number }[]>;
  batchSizes(key: string): Promise<number[]>;
  summaries(home: string): Promise<{ event: string; count: number; retried: number; failed: number }[]>;
}

export const probe = (env as unknown as { PROBE: ProbeApi }).PROBE;

/** maxOverlap: the most spans running at one instant. */
export function maxOverlap(spans: readonly Span[]): number {
  const edges = spans.flatMap((s) => [
    [s.startedAt, 1],
    [s.finishedAt, -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!); // a finish at t frees its slot before a start at t
  let now = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (now += d!));
  return max;
}
