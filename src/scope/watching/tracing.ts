/**
 * OpenTelemetry spans of this object's jobs (docs/operating.md "OpenTelemetry"), exported over OTLP/HTTP (JSON)
 * after the work, in batches — never on a write's path: the one commit path hands each write's record here
 * (follow-ups.ts), spans are built from the rows and buffered, and a send goes FLUSH_AFTER_MS later (or at once past
 * FLUSH_AT spans) in the background.
 *
 * Per job, in the trace its enqueue carried (job/trace.ts; every job's own trace with `otel.traceAll`):
 * - `publish <type>` (PRODUCER), the enqueue — a child of the caller's span;
 * - `process <type>` (CONSUMER), each attempt this instance started, from its start to its end — a child of the
 *   enqueue span, with its outcome (completed, failed, retry, sleeping, waiting, cancelled, superseded), attempt and
 *   lease; an error status with the error for a failure or a retry;
 * - `sleep <type>` / `wait <type>` (INTERNAL), from an attempt that ended in a durable sleep or a wait with a
 *   timeout until the time it is due again.
 * Attributes follow the messaging semantic conventions (`messaging.system` "edgequeue", `messaging.operation`,
 * `messaging.destination.name` the type, `messaging.message.id` the job id).
 *
 * @module
 */
import { attemptSpanId, enqueueSpanId, parseTraceparent, pauseSpanId, traceIdOf, type TraceContext } from "../../job/trace";
import { withTimeout } from "../../deadlines";
import { VERSION } from "../../version";
import type { JobRow } from "../jobs/job-row";
import { WAIT_FOREVER } from "../workflow/wait-entries";

/** A batch goes this long after its first span… */
const FLUSH_AFTER_MS = 1_000;
/** …or at once when it holds this many. */
const FLUSH_AT = 256;
/** Spans held at most while sends fail or lag; the oldest beyond are dropped (and counted in a log line). */
const BUFFER_MAX = 4_096;
const SEND_TIMEOUT_MS = 10_000;

const KIND = { internal: 1, producer: 4, consumer: 5 } as const;

type Attr = { key: string; value: { stringValue: string } | { intValue: string } };
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attr[];
  status: { code: 0 | 1 | 2; message?: string };
}

export interface TracingDeps {
  /** The full export URL (…/v1/traces), or null: nothing is exported. */
  url: string | null;
  headers: Record<string, string>;
  traceAll: boolean;
  serviceName: string;
  fetch(request: Request): Promise<Response>;
  keepAlive(p: Promise<unknown>): void;
}

const nanos = (ms: number) => `${Math.round(ms)}000000`;
const str = (key: string, v: string): Attr => ({ key, value: { stringValue: v } });
const int = (key: string, v: number): Attr => ({ key, value: { intValue: String(v) } });

export class Tracing {
  private buffer: OtlpSpan[] = [];
  private timer: { handle: ReturnType<typeof setTimeout>; done: () => void } | null = null;
  private dropped = 0;
  /**
   * Attempts this instance saw start (job id → its started_at): only those get a span, from their start. Matched by
   * the start, not the attempt number — a sleep, a wait or a release gives the attempt back — and forgotten with
   * any row of the job that is not running.
   */
  private readonly running = new Map<string, number>();

  constructor(private readonly d: TracingDeps) {}

  get on(): boolean {
    return this.d.url !== null;
  }

  /** changed: a write's created rows and lifecycle rows, as spans. */
  changed(created: readonly JobRow[], events: readonly JobRow[], now: number): void {
    if (!this.on) return;
    for (const row of created) {
      const trace = this.traceOf(row);
      if (trace !== undefined) this.add(this.enqueueSpan(row, trace));
    }
    for (const row of events) {
      const trace = this.traceOf(row);
      if (trace === undefined) continue;
      if (row.state === "running") {
        if (row.started_at !== null) this.running.set(row.id, row.started_at);
        continue;
      }
      const started = this.running.get(row.id);
      this.running.delete(row.id);
      if (started === undefined || started !== row.started_at) continue;
      for (const span of this.attemptSpans(row, trace, now)) this.add(span);
    }
  }

  /** traceOf: the row's trace context; null: traced without one (traceAll); undefined: not traced. */
  private traceOf(row: JobRow): TraceContext | null | undefined {
    if (row.trace !== null) return JSON.parse(row.trace) as TraceContext;
    return this.d.traceAll ? null : undefined;
  }

  private base(row: JobRow, operation: string): Attr[] {
    const attrs = [str("messaging.system", "edgequeue"), str("messaging.operation", operation), str("messaging.destination.name", row.type), str("messaging.message.id", row.id)];
    if (row.scope_type !== null && row.scope_id !== null) attrs.push(str("edgequeue.scope", `${row.scope_type}:${row.scope_id}`));
    return attrs;
  }

  private enqueueSpan(row: JobRow, trace: TraceContext | null): OtlpSpan {
    const parent = trace ? parseTraceparent(trace.traceparent)?.spanId : undefined;
    return {
      traceId: traceIdOf(row.id, trace),
      spanId: enqueueSpanId(row.id),
      ...(parent ? { parentSpanId: parent } : {}),
      name: `publish ${row.type}`,
      kind: KIND.producer,
      startTimeUnixNano: nanos(row.created_at),
      endTimeUnixNano: nanos(row.created_at),
      attributes: [...this.base(row, "publish"), int("edgequeue.priority", row.priority), int("edgequeue.run_at", row.run_at)],
      status: { code: 0 },
    };
  }

  private attemptSpans(row: JobRow, trace: TraceContext | null, now: number): OtlpSpan[] {
    const traceId = traceIdOf(row.id, trace);
    const outcome = outcomeOf(row);
    const failed = outcome === "failed" || outcome === "retry";
    const attrs = [...this.base(row, "process"), int("edgequeue.attempt", row.attempts), int("edgequeue.max_attempts", row.max_attempts), str("edgequeue.outcome", outcome)];
    if (row.lease_ms !== null) attrs.push(int("edgequeue.lease_ms", row.lease_ms));
    if (outcome === "retry") attrs.push(int("edgequeue.retry_at", row.run_at));
    if (row.failure_kind !== null) attrs.push(str("edgequeue.failure_kind", row.failure_kind));
    const spans: OtlpSpan[] = [
      {
        traceId,
        spanId: attemptSpanId(row.id, row.attempts),
        parentSpanId: enqueueSpanId(row.id),
        name: `process ${row.type}`,
        kind: KIND.consumer,
        startTimeUnixNano: nanos(row.started_at!),
        endTimeUnixNano: nanos(now),
        attributes: attrs,
        status: failed ? { code: 2, message: row.last_error ?? outcome } : { code: outcome === "completed" ? 1 : 0 },
      },
    ];
    // A durable sleep, or a wait with a timeout: the time it is due again is known now.
    const until = outcome === "sleeping" || (outcome === "waiting" && row.run_at < WAIT_FOREVER) ? row.run_at : null;
    if (until !== null && until > now) {
      spans.push({
        traceId,
        spanId: pauseSpanId(row.id, row.attempts),
        parentSpanId: enqueueSpanId(row.id),
        name: `${outcome === "sleeping" ? "sleep" : "wait"} ${row.type}`,
        kind: KIND.internal,
        startTimeUnixNano: nanos(now),
        endTimeUnixNano: nanos(until),
        attributes: [...this.base(row, "process"), int("edgequeue.attempt", row.attempts), ...(row.wait ? [str("edgequeue.waiting_for", row.wait)] : [])],
        status: { code: 0 },
      });
    }
    return spans;
  }

  private add(span: OtlpSpan): void {
    this.buffer.push(span);
    if (this.buffer.length > BUFFER_MAX) {
      this.dropped += this.buffer.length - BUFFER_MAX;
      this.buffer.splice(0, this.buffer.length - BUFFER_MAX);
    }
    if (this.buffer.length >= FLUSH_AT) this.d.keepAlive(this.flush());
    else if (this.timer === null) {
      this.d.keepAlive(
        new Promise<void>((done) => {
          this.timer = { handle: setTimeout(() => void this.flush(), FLUSH_AFTER_MS), done };
        }),
      );
    }
  }

  /** flush: every buffered span, in one OTLP request; a failed send is logged and its spans dropped. */
  async flush(): Promise<void> {
    // The timer's keep-alive ends with this flush, whichever started it.
    const timer = this.timer;
    this.timer = null;
    if (timer) clearTimeout(timer.handle);
    try {
      await this.send();
    } finally {
      timer?.done();
    }
  }

  private async send(): Promise<void> {
    const spans = this.buffer;
    this.buffer = [];
    if (spans.length === 0 || this.d.url === null) return;
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [str("service.name", this.d.serviceName), str("service.version", VERSION)] },
          scopeSpans: [{ scope: { name: "edgequeue", version: VERSION }, spans }],
        },
      ],
    });
    try {
      const res = await withTimeout(this.d.fetch(new Request(this.d.url, { method: "POST", body, headers: { "content-type": "application/json", ...this.d.headers } })), SEND_TIMEOUT_MS);
      await res.body?.cancel();
      if (!res.ok) throw new Error(`answered ${res.status}`);
    } catch (e) {
      console.warn(JSON.stringify({ event: "otel:export_failed", spans: spans.length, error: String(e) }));
    }
    if (this.dropped > 0) {
      console.warn(JSON.stringify({ event: "otel:spans_dropped", spans: this.dropped }));
      this.dropped = 0;
    }
  }
}

/** outcomeOf: how an attempt ended, from its row. */
function outcomeOf(row: JobRow): string {
  if (row.state === "pending") return row.last_error === null ? "sleeping" : "retry";
  return row.state;
}

/** otlpHeaders: OTEL_EXPORTER_OTLP_HEADERS' `k=v,k2=v2` (values URL-encoded), as the OpenTelemetry spec writes them. */
export function otlpHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(",")) {
    const at = part.indexOf("=");
    if (at <= 0) continue;
    try {
      out[decodeURIComponent(part.slice(0, at).trim())] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // A malformed escape: that header is left out (and said) rather than every object failing to start.
      console.error(JSON.stringify({ event: "otel:bad_header", header: part.slice(0, at).trim() }));
    }
  }
  return out;
}

/** tracesUrl: the endpoint's `/v1/traces` (OTLP/HTTP's path for spans), or null. */
export function tracesUrl(endpoint: string | null | undefined): string | null {
  return endpoint ? `${endpoint.replace(/\/+$/, "")}/v1/traces` : null;
}
