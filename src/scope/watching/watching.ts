/**
 * What follows a scope object's jobs from outside it as they change — live subscriptions (watchers.ts), completion
 * callbacks (callbacks.ts) and OpenTelemetry spans (tracing.ts) — made from the object's env and config. The one
 * commit path tells each of them what a write changed (follow-ups.ts); the alarm sends the callbacks still owed.
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import type { Env } from "../../env";
import { CallbackSender } from "./callbacks";
import { otlpHeaders, tracesUrl, Tracing } from "./tracing";
import { Watchers } from "./watchers";

export interface WatchingDeps {
  ctx: DurableObjectState;
  env: Env;
  config: QueueConfig;
  now(): number;
  keepAlive(p: Promise<unknown>): void;
  /** Set the alarm anew: a callback is left for later. */
  rearm(): Promise<void>;
}

export class Watching {
  readonly watchers: Watchers;
  readonly callbacks: CallbackSender;
  readonly tracing: Tracing;

  constructor(d: WatchingDeps) {
    const { ctx, env, config } = d;
    const sql = ctx.storage.sql;
    this.watchers = new Watchers({ ctx, sql, limit: () => config.limits.subscribersPerObject, now: d.now });
    this.callbacks = new CallbackSender({
      sql,
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
}
