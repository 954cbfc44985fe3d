/**
 * The one place errors become HTTP (docs/design.md, Errors): a QueueError keeps its
 * code and status; anything else is logged (never with payloads) and answered
 * `500 internal` with no detail that could leak.
 *
 * @module
 */
import { ERROR_STATUS, QueueError, type ErrorBody } from "../errors";

export function errorBody(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof QueueError) return { status: err.status, body: err.toBody() };
  console.error(JSON.stringify({ event: "http:internal_error", error: String(err), stack: (err as Error)?.stack }));
  return { status: ERROR_STATUS.internal, body: { error: { code: "internal", message: "internal error; the request may not have been applied" } } };
}

export function errorResponse(err: unknown): Response {
  const { status, body } = errorBody(err);
  const headers: Record<string, string> = {};
  if (status === 401) headers["www-authenticate"] = 'Bearer realm="edgequeue"';
  // A 405 must say what the path takes (RFC 9110 §15.5.6); the app puts the methods in the details.
  if (err instanceof QueueError && err.code === "method_not_allowed") {
    const allowed = (err.details as { allowed?: unknown } | undefined)?.allowed;
    if (Array.isArray(allowed)) headers.allow = allowed.join(", ");
  }
  return Response.json(body, { status, headers });
}
