/**
 * The watching capability (capability.ts): what follows a scope object's jobs
 * from outside as they change — lifecycle events to the observer and
 * analytics (events.ts), live subscriptions (watchers.ts), completion
 * callbacks (callbacks.ts) and OpenTelemetry spans (tracing.ts). It hears
 * each committed write from its record; the alarm sends the callbacks still
 * owed.
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import type { Env } from "../../env";
import type { Capability, WakeRow } from "../jobs/capability";
import type { Changes } from "../jobs/changes";
import type { JobRow } from "../jobs/job-row";
import { CallbackSender } from "./callbacks";
import { EventSink, type Observer } from "./events";
import { otlpHeaders, tracesUrl, Tracing } from "./tracing";
import { Watchers } from "./watchers";
import { lensOf } from "../../sealing/lens";

export interface WatchingDeps {
  ctx: DurableObjectState;
  env: Env;
  config: QueueConfig;
  now(): number;
  keepAlive(p: Promise<unknown>): void;
  /** Set the alarm anew: a callback is left for later. */
  rearm(): Promise<void>;
  /** This object's name, for the reap summary ("?" before it is known). */
  home(): string;
}

export class Watching implements Capability {
  readonly name = "watching";
  readonly events: EventSink;
  readonly watchers: Watchers;
  readonly callbacks: CallbackSender;
  readonly tracing: Tracing;
  readonly wakeColumns = { calls: "(SELECT min(next_at) FROM callback_out WHERE dead_at IS NULL)" };

  constructor(private readonly d: WatchingDeps) {
    const { ctx, env, config } = d;
    const sql = ctx.storage.sql;
    const lens = lensOf(env, config);
    const binding = (name: string) => (env as unknown as Record<string, unknown>)[name];
    this.events = new EventSink(
      config,
      config.observer ? (binding(config.observer) as Observer) : null,
      d.keepAlive,
      config.analytics ? (binding(config.analytics) as AnalyticsEngineDataset) : null,
    );
    this.watchers = new Watchers({ ctx, sql, lens, limit: () => config.limits.subscribersPerObject, now: d.now });
    this.callbacks = new CallbackSender({
      sql,
      lens,
      now: d.now,
      secret: () => env.EDGEQUEUE_CALLBACK_SECRET ?? null,
      fetch: (request) => fetch(request),
      keepAlive: d.keepAlive,
      rearm: d.rearm,
    });
    this.tracing = new Tracing({
      url: tracesUrl(config.otel.endpoint ?? env.OTEL_EXPORTER_OTLP_ENDPOINT),
      headers: { ...otlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...config.otel.headers },
      traceAll: config.otel.traceAll,
      serviceName: config.otel.serviceName,
      fetch: (request) => fetch(request),
      keepAlive: d.keepAlive,
    });
  }

  /** Lifecycle events, `enqueued` points, releases, lease losses, progress, the reap summary; the watchers; the spans. */
  told(c: Changes, rows: readonly JobRow[], now: number): void {
    const { events } = this;
    events.enqueued(c.created);
    events.emit(c.events, now);
    if (c.released) events.released(c.released.rows, now, c.released.reason);
    for (const l of c.leaseLost) events.leaseLost(l.row, now, l.write, l.reason);
    if (c.progressed.length > 0) events.progress(c.progressed, now);
    // What watches from outside never fails the write that told it, nor each other: the rest still run.
    outside("watchers", () => this.watchers.changed([...arrivals(c.created), ...rows], c.progressed, c.gathered.fed));
    outside("tracing", () => this.tracing.changed(c.created, c.events, now));
    if (c.reaped.length > 0) events.reaped(this.d.home(), c.reaped, now);
  }

  /** The completion callbacks of jobs that ended — the job_callback trigger owed them (callbacks.ts). */
  follow(c: Changes): void {
    if (c.events.some((r) => r.finished_at !== null && typeof r.callback === "string")) this.callbacks.kick();
  }

  nextWake(row: WakeRow): number | null {
    return row.calls ?? null;
  }

  async alarm(): Promise<void> {
    await this.callbacks.flushDue();
  }
}

/**
 * arrivals: a job that went straight to its handler was never stored `pending` (docs/design.md "Straight to a
 * handler"); its watchers hear of its arrival as of any job's — as its timeline shows it —, then of its start.
 */
function arrivals(created: readonly JobRow[]): JobRow[] {
  return created.flatMap((r) =>
    r.state === "running" ? [{ ...r, state: "pending", attempts: 0, started_at: null, lease_token: null, lease_owner: null, lease_expires_at: null, lease_ms: null, updated_at: r.created_at }] : [],
  );
}

/** outside: one of the outside watchers told of a write; a failure is logged, not thrown into the commit path. */
function outside(what: string, tell: () => void): void {
  try {
    tell();
  } catch (e) {
    console.error(JSON.stringify({ event: "watch:failed", what, error: String(e) }));
  }
}
