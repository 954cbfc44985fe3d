/**
 * maxAttempts: 1 to 1,000 attempts, or unlimited — `Infinity` in code and over
 * RPC, `"unlimited"` where JSON cannot carry Infinity (HTTP, the
 * EDGEQUEUE_CONFIG var) — for a job that must be retried until it succeeds
 * (docs/http-api.md "The HTTP API"). Unlimited is kept as ATTEMPTS_UNLIMITED,
 * which a job's views show as it is: more attempts than a job can make (a
 * billion, at least a second apart).
 *
 * @module
 */
import { z } from "zod";

export const ATTEMPTS_MAX = 1000;
export const ATTEMPTS_UNLIMITED = 1_000_000_000;

export const MaxAttemptsSchema = z
  .union([z.number().int().min(1).max(ATTEMPTS_MAX), z.literal(Infinity), z.literal("unlimited")])
  .transform((v) => (v === Infinity || v === "unlimited" ? ATTEMPTS_UNLIMITED : v))
  .meta({ description: `1 to ${ATTEMPTS_MAX} attempts, or "unlimited" (Infinity over RPC): retried until it succeeds; shown as ${ATTEMPTS_UNLIMITED}.` });
