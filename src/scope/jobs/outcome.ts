/**
 * Expected outcomes of a transition that did not happen — lost a race, stale
 * token, terminal job — returned as data, never thrown (docs/design.md, Errors).
 *
 * @module
 */
import type { JobState } from "../../job/states";

/**
 * Why a lease-bearing call was refused: the token is not the current one, the
 * lease ran out (or ran into the job's timeout), the job was cancelled, or —
 * for a heartbeat — the job already finished.
 */
export type LeaseLostReason = "stale_token" | "expired" | "cancelled" | "timeout";

export type Refusal =
  | { ok: false; code: "not_found" }
  | { ok: false; code: "lease_lost"; reason: LeaseLostReason; state: JobState }
  | { ok: false; code: "already_terminal"; state: JobState }
  | { ok: false; code: "conflict"; reason: string; state: JobState }
  /** A journal write the job cannot take (scope/workflow/steps.ts): a result or journal over its cap, or a step that is not where the journal has it. */
  | { ok: false; code: "payload_too_large" | "journal_too_large" | "nondeterminism"; reason: string; state: JobState }
  /** A wait token past its expiry (job/wait-token.ts). */
  | { ok: false; code: "gone"; reason: string }
  /** A journal write that can never be taken (a second wait token of a name; no QUEUE_TOKEN to sign one with). */
  | { ok: false; code: "refused"; reason: string; state: JobState }
  /** A field of the call that names something the job does not have (a rerun's `fromStep`): a 400 naming it. */
  | { ok: false; code: "invalid"; path: string; reason: string };

export type Outcome<T> = ({ ok: true } & T) | Refusal;
