/**
 * The few real failures, each with a stable string `code` that one place
 * (`coordinator/error-response.ts`) maps to HTTP. Expected outcomes of a
 * transition (a lost lease, a terminal job) come back from the scope object as
 * a result union and become a QueueError only at the edge.
 *
 * @module
 */
import type { JsonObject } from "./job/json-safe";

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  /** A known token whose role (or its types) does not cover the call; the answer names both (docs/operating.md "Tokens and roles"). */
  forbidden: 403,
  not_found: 404,
  /** A known API path asked with a method it does not take; the answer's `Allow` header lists those it does (docs/http-api.md, The HTTP API). */
  method_not_allowed: 405,
  lease_lost: 409,
  already_terminal: 409,
  conflict: 409,
  /** A wait token past its expiry (docs/workflows.md). */
  gone: 410,
  /** A request's body stopped arriving for BODY_IDLE_MS before its end (coordinator/body.ts). */
  request_timeout: 408,
  payload_too_large: 413,
  /** A type's maxDepth is reached in the object the job would join: nothing was written. */
  queue_full: 429,
  /** An object holds its most live subscriptions (limits.subscribersPerObject; docs/http-api.md "Live subscriptions"). */
  too_many_subscribers: 429,
  internal: 500,
  /** The Worker running the queue lacks a binding, class export or flag it needs; the message says what to add (edgequeue/server). */
  misconfigured: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Field problems (`[{path, message}]`) or facts about the refusal (`{reason, state}`). JSON, typed loosely for RPC (see JsonObject). */
export type ErrorDetails = JsonObject | JsonObject[];

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
}

export class QueueError extends Error {
  override readonly name = "QueueError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message);
  }

  get status(): (typeof ERROR_STATUS)[ErrorCode] {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}
