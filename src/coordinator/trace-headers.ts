/**
 * An enqueue over HTTP continues the caller's trace (docs/operating.md "OpenTelemetry"): a valid `traceparent`
 * header (with its `tracestate`) becomes the `trace` of each job the body does not give one. An invalid header is
 * ignored, as W3C Trace Context says; a `trace` field in the body wins.
 *
 * @module
 */
import { parseTraceparent, TRACESTATE_MAX, type TraceContext } from "../job/trace";

/** The operations whose bodies take the headers' trace context. */
const TRACED: ReadonlySet<string> = new Set(["enqueue", "enqueueBatch"]);

export function withTraceHeaders(operationId: string, body: unknown, traceparent: string | undefined, tracestate: string | undefined): unknown {
  if (!TRACED.has(operationId) || traceparent === undefined || !parseTraceparent(traceparent.trim()) || typeof body !== "object" || body === null) return body;
  // A tracestate past what a job keeps (512 characters) is dropped, not refused: the caller never wrote that field.
  const trace: TraceContext = tracestate && tracestate.length <= TRACESTATE_MAX ? { traceparent: traceparent.trim(), tracestate } : { traceparent: traceparent.trim() };
  const fill = (job: unknown) => (typeof job === "object" && job !== null && !("trace" in job) ? { ...job, trace } : job);
  const jobs = (body as { jobs?: unknown }).jobs;
  if (operationId === "enqueueBatch") return Array.isArray(jobs) ? { ...body, jobs: jobs.map(fill) } : body;
  return fill(body);
}
