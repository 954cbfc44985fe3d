/**
 * W3C trace context for jobs (docs/operating.md "OpenTelemetry"): an enqueue may carry a `traceparent` (and
 * `tracestate`) — HTTP headers, or the `trace` field over RPC and in the clients —, the job keeps it, and its spans
 * continue that trace: the enqueue span is a child of the caller's span, each attempt a child of the enqueue span.
 * The span ids are derived from the job id (and the attempt), so the queue that exports a span and the SDK that
 * hands the handler `ctx.trace` (its attempt's span as parent) name the same span without telling each other.
 *
 * @module
 */
import { hash64 } from "./hash";

/** The longest tracestate a job keeps. */
export const TRACESTATE_MAX = 512;

export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** version 00, a 32-hex trace id and a 16-hex parent id (neither all zero), 2-hex flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function parseTraceparent(traceparent: string): { traceId: string; spanId: string; flags: string } | null {
  const m = TRACEPARENT.exec(traceparent);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return null;
  return { traceId: m[1]!, spanId: m[2]!, flags: m[3]! };
}

/** The trace a job's spans belong to: its enqueue's, or (traced without one: `otel.traceAll`) one of its own. */
export function traceIdOf(jobId: string, trace: TraceContext | null): string {
  return (trace && parseTraceparent(trace.traceparent)?.traceId) ?? hash64(`trace:${jobId}`) + hash64(`trace2:${jobId}`);
}

export const enqueueSpanId = (jobId: string) => hash64(`enqueue:${jobId}`);
export const attemptSpanId = (jobId: string, attempt: number) => hash64(`attempt:${attempt}:${jobId}`);
/** The span of the sleep or wait an attempt ended in (scope/watching/tracing.ts). */
export const pauseSpanId = (jobId: string, attempt: number) => hash64(`pause:${attempt}:${jobId}`);

/** attemptTrace: the context a handler's own spans continue (ctx.trace) — its attempt's span as their parent. */
export function attemptTrace(jobId: string, attempt: number, trace: TraceContext | null): TraceContext {
  const flags = (trace && parseTraceparent(trace.traceparent)?.flags) ?? "01";
  const out: TraceContext = { traceparent: `00-${traceIdOf(jobId, trace)}-${attemptSpanId(jobId, attempt)}-${flags}` };
  return trace?.tracestate ? { ...out, tracestate: trace.tracestate } : out;
}

/**
 * activeTrace: the active OpenTelemetry context, injected as W3C headers, when the caller's process registered the
 * OpenTelemetry API (its global, `Symbol.for("opentelemetry.js.api.1")`) — read without depending on the package.
 */
export function activeTrace(): TraceContext | undefined {
  const api = (globalThis as Record<symbol, unknown>)[Symbol.for("opentelemetry.js.api.1")] as
    | { context?: { active(): unknown }; propagation?: { inject(ctx: unknown, carrier: Record<string, string>, setter: { set(c: Record<string, string>, k: string, v: string): void }): void } }
    | undefined;
  if (!api?.context || !api.propagation) return undefined;
  const carrier: Record<string, string> = {};
  try {
    api.propagation.inject(api.context.active(), carrier, { set: (c, k, v) => void (c[k] = v) });
  } catch {
    return undefined;
  }
  if (!carrier.traceparent || !parseTraceparent(carrier.traceparent)) return undefined;
  return carrier.tracestate ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent };
}
