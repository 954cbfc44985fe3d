/**
 * Lifecycle events (`job:started`, `job:completed`, `job:retry_scheduled`,
 * `job:failed`, `job:cancelled`, … and `job:progress`): one JSON log line each and, when the config
 * names an observer binding, one `observe(events)` call per batch of them.
 * Built from the rows a transition returned, so an event always says what
 * the row now says. Payloads are never included.
 *
 * @module
 */
import { REDACTED } from "../../sealing/redacted";
import type { QueueConfig } from "../../config/schema";
import { analyticsPoints, eventSource, writePoints } from "../../metrics/analytics";
import { scopeOfRow, type JobRow } from "../jobs/job-row";

export type { LifecycleEvent, LifecycleEventName } from "../../job/lifecycle-event";
import type { LifecycleEvent, LifecycleEventName } from "../../job/lifecycle-event";

/** A reap pass's summary: how many attempts whose lease ran out it ended (each also has its own event). */
export interface ReapSummary {
  event: "reaper:recovered";
  at: number;
  home: string;
  count: number;
  retried: number;
  failed: number;
}

/** The events the default log level ("operator") writes a line for: failures, retries and stalls. */
const OPERATOR_EVENTS: ReadonlySet<LifecycleEventName> = new Set(["job:failed", "job:retry_scheduled", "job:lease_lost"]);

function baseOf(row: JobRow, now: number) {
  return { at: now, id: row.id, type: row.type, scope: scopeOfRow(row), attempt: row.attempts, maxAttempts: row.max_attempts };
}

/** eventFor: the event a row's new state means, or null (a pending row that never ran is not an event). */
export function eventFor(row: JobRow, now: number): LifecycleEvent | null {
  const base = baseOf(row, now);
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
    case "superseded":
      // reason: `superseded by <the follower's id>`; error: what the attempt ended with.
      return { event: "job:superseded", ...base, reason: row.cancel_reason, error: row.last_error, durationMs };
    case "expired":
      // reason: when it expired (scope/jobs/expiry.ts); it never started.
      return { event: "job:expired", ...base, reason: row.cancel_reason };
    case "pending":
      return row.started_at === null ? null : { event: "job:retry_scheduled", ...base, runAt: row.run_at, error: row.last_error };
    case "waiting":
      return { event: "job:waiting", ...base, runAt: row.run_at, waitingFor: row.wait === null ? [] : (JSON.parse(row.wait) as NonNullable<LifecycleEvent["waitingFor"]>) };
  }
}

export interface Observer {
  observe(events: (LifecycleEvent | ReapSummary)[]): Promise<unknown>;
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
    this.send(events);
  }

  /** released: jobs given back unrun — pending, due now, their attempts not counted (release, a restart's orphans). */
  released(rows: readonly JobRow[], now: number, reason: string): void {
    this.send(rows.filter((r) => r.state === "pending").map((r) => ({ ...baseOf(r, now), event: "job:released" as const, reason })));
  }

  /** leaseLost: a holder's write was refused because it no longer holds the job; `write` says which. */
  leaseLost(row: JobRow, now: number, write: string, reason: string): void {
    this.send([{ ...baseOf(row, now), event: "job:lease_lost", write, reason }]);
  }

  /**
   * progress: holders' reports (scope/watching/progress.ts) — to the observer, and a log line only at the "all" level; no
   * analytics point (a report is no transition).
   */
  progress(rows: readonly JobRow[], now: number): void {
    if (rows.length === 0) return;
    const events = rows.map((r): LifecycleEvent => ({ ...baseOf(r, now), event: "job:progress", progress: shownProgress(this.config, r) }));
    if (this.config.logEvents === "all") for (const e of events) console.log(JSON.stringify(e));
    this.observe(events);
  }

  /** reaped: one line (and observer event) per reap pass that ended attempts, at the operator level. */
  reaped(home: string, rows: readonly JobRow[], now: number): void {
    if (rows.length === 0) return;
    const retried = rows.filter((r) => r.state === "pending").length;
    const summary: ReapSummary = { event: "reaper:recovered", at: now, home, count: rows.length, retried, failed: rows.length - retried };
    if (this.config.logEvents !== "none") console.log(JSON.stringify(summary));
    this.observe([summary]);
  }

  private send(events: LifecycleEvent[]): void {
    if (events.length === 0) return;
    if (this.analytics) writePoints(this.analytics, analyticsPoints(events.map(eventSource)));
    // A JSON line per transition cuts push throughput to a fifth through wrangler dev (bench logLinesAllVsOperator): by default
    // only the lines an operator acts on (failures, retries and stalls; job:starving is logged by the dispatcher).
    const level = this.config.logEvents;
    if (level === "all") for (const e of events) console.log(JSON.stringify(e));
    else if (level === "operator") for (const e of events) if (OPERATOR_EVENTS.has(e.event)) console.log(JSON.stringify(e));
    this.observe(events);
  }

  private observe(events: (LifecycleEvent | ReapSummary)[]): void {
    if (!this.observer) return;
    this.keepAlive(this.observer.observe(events).catch((e: unknown) => console.error(JSON.stringify({ event: "observer:failed", error: String(e) }))));
  }

  /**
   * Service-binding invocations one handler call may cost an event: the call,
   * plus observer batches for its starts, its early settles and its end.
   */
  get invocationsPerCall(): number {
    return this.observer ? 4 : 1;
  }
}

/** shownProgress: a report as lifecycle events carry it — a sensitive type's redacted (docs/operating.md "Sensitive values"). */
function shownProgress(config: QueueConfig, r: JobRow): unknown {
  if (r.progress === null) return null;
  return config.typeSettings(r.type).sensitive ? REDACTED : JSON.parse(r.progress);
}
