/**
 * Lifecycle events (`job:started`, `job:completed`, `job:retry_scheduled`,
 * `job:failed`, `job:cancelled`): one JSON log line each and, when the config
 * names an observer binding, one `observe(events)` call per batch of them.
 * Built from the rows a transition returned, so an event always says what
 * the row now says. Payloads are never included.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import type { Scope } from "../job/schemas";
import type { FailureKind } from "../job/states";
import { analyticsPoints, eventSource, writePoints } from "../metrics/analytics";
import { scopeOfRow, type JobRow } from "./job-row";

export type LifecycleEventName = "job:started" | "job:completed" | "job:retry_scheduled" | "job:failed" | "job:cancelled";

export interface LifecycleEvent {
  event: LifecycleEventName;
  at: number;
  id: string;
  type: string;
  scope: Scope | null;
  attempt: number;
  maxAttempts: number;
  /** retry_scheduled: when it runs again. */
  runAt?: number;
  error?: string | null;
  failureKind?: FailureKind;
  /** completed / failed: from the attempt's start. */
  durationMs?: number;
  reason?: string | null;
}

/** The events the default log level ("operator") writes a line for. */
const OPERATOR_EVENTS: ReadonlySet<LifecycleEventName> = new Set(["job:failed", "job:retry_scheduled"]);

/** eventFor: the event a row's new state means, or null (a pending row that never ran is not an event). */
export function eventFor(row: JobRow, now: number): LifecycleEvent | null {
  const base = {
    at: now,
    id: row.id,
    type: row.type,
    scope: scopeOfRow(row),
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
  };
  const durationMs = row.started_at === null ? undefined : now - row.started_at;
  switch (row.state) {
    case "running":
      return { event: "job:started", ...base };
    case "completed":
      return { event: "job:completed", ...base, durationMs };
    case "failed":
      return { event: "job:failed", ...base, failureKind: row.failure_kind ?? undefined, error: row.last_error, durationMs };
    case "cancelled":
      return { event: "job:cancelled", ...base, reason: row.cancel_reason };
    case "pending":
      return row.started_at === null ? null : { event: "job:retry_scheduled", ...base, runAt: row.run_at, error: row.last_error };
  }
}

export interface Observer {
  observe(events: LifecycleEvent[]): Promise<unknown>;
}

/** EventSink writes the log lines, forwards to the observer and writes analytics points, never failing the transition that caused them. */
export class EventSink {
  constructor(
    private readonly config: QueueConfig,
    private readonly observer: Observer | null,
    private readonly keepAlive: (p: Promise<unknown>) => void,
    private readonly analytics: AnalyticsEngineDataset | null = null,
  ) {}

  /** enqueued: created jobs are not lifecycle events (no log line, no observer call) but are an analytics transition. */
  enqueued(rows: readonly JobRow[]): void {
    if (!this.analytics || rows.length === 0) return;
    writePoints(this.analytics, analyticsPoints(rows.map((r) => ({ type: r.type, outcome: "enqueued", scope: scopeOfRow(r), attempt: r.attempts }))));
  }

  emit(rows: readonly JobRow[], now: number): void {
    const events: LifecycleEvent[] = [];
    for (const row of rows) {
      const e = eventFor(row, now);
      if (e) events.push(e);
    }
    if (events.length === 0) return;
    if (this.analytics) writePoints(this.analytics, analyticsPoints(events.map(eventSource)));
    // A JSON line per transition halves push throughput through wrangler dev (bench logLinesOffVsOn): by default
    // only the lines an operator acts on (failures, retries and stalls; job:starving is logged by the dispatcher).
    const level = this.config.logEvents;
    if (level === "all") for (const e of events) console.log(JSON.stringify(e));
    else if (level === "operator") for (const e of events) if (OPERATOR_EVENTS.has(e.event)) console.log(JSON.stringify(e));
    if (this.observer) {
      this.keepAlive(
        this.observer.observe(events).catch((e: unknown) => console.error(JSON.stringify({ event: "observer:failed", error: String(e) }))),
      );
    }
  }

  /**
   * Service-binding invocations one handler call may cost an event: the call,
   * plus observer batches for its starts, its early settles and its end.
   */
  get invocationsPerCall(): number {
    return this.observer ? 4 : 1;
  }
}
