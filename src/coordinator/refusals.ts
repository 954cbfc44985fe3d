/**
 * Refusals: what a scope object answers as data (`{ok: false, code, reason, state}`, scope/jobs/outcome.ts)
 * made the API's QueueError, in one place for every operation on a job (docs/design.md "Errors").
 *
 * @module
 */
import { QueueError } from "../errors";
import type { Refusal } from "../scope/api";

export function notFound(id: string): QueueError {
  return new QueueError("not_found", `job ${id} not found`);
}

/** refusalError: a scope object's refusal of `action` on job `id`, as the API says it. */
export function refusalError(id: string, r: Refusal, action: string): QueueError {
  switch (r.code) {
    case "not_found":
      return notFound(id);
    case "lease_lost":
      return new QueueError("lease_lost", `cannot ${action} job ${id}: ${LEASE_LOST_WHY[r.reason]}`, { reason: r.reason, state: r.state });
    case "already_terminal":
      return new QueueError("already_terminal", `cannot ${action} job ${id}: it is already ${r.state}`, { state: r.state });
    case "conflict":
      return new QueueError("conflict", `cannot ${action} job ${id}: ${r.reason}`, { state: r.state });
    case "nondeterminism":
      return new QueueError("conflict", `cannot ${action} job ${id}: ${r.reason}`, { state: r.state, reason: "nondeterminism" });
    case "payload_too_large":
    case "journal_too_large":
      return new QueueError("payload_too_large", `cannot ${action} job ${id}: ${r.reason}`, { state: r.state, reason: r.code });
    case "gone":
      return new QueueError("gone", `cannot ${action} job ${id}: ${r.reason}`);
    case "refused":
      return new QueueError("conflict", `cannot ${action} job ${id}: ${r.reason}`, { state: r.state, reason: "refused" });
    case "invalid":
      return invalidField(r.path, r.reason);
  }
}

const LEASE_LOST_WHY = {
  stale_token: "the lease token is not the job's current lease (it expired and the job was claimed again, or the token is wrong)",
  expired: "the lease expired",
  cancelled: "the job was cancelled (or superseded by a newer job of its key)",
  timeout: "the attempt ran past the job's timeoutMs",
} as const;

/** invalidField: a 400 naming one field, as zod's verdicts name theirs (coordinator/validate.ts). */
export function invalidField(path: string, message: string): QueueError {
  return new QueueError("invalid_request", `${path}: ${message}`, [{ path, message }]);
}
