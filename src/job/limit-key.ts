/**
 * A keyed limit's key (docs/guards.md "Keyed limits"): a path in the job — `payload.<field>[.<field>…]`,
 * `scope.id`, `scope.type` — or `concurrencyKey`, the enqueue's own. An enqueue's `concurrencyKey`, when given,
 * is the key whatever the path. Read once, when the job is prepared for its home; the home keeps it in
 * `job.limit_key`.
 *
 * @module
 */
import { z } from "zod";

export const KEY_PATH_HINT = `"payload.<field>" (dots for nested fields), "scope.id", "scope.type" or "concurrencyKey"`;
const KEY_PATH = /^(payload(\.[^.\s]+)+|scope\.id|scope\.type|concurrencyKey)$/;
export const KeyPathSchema = z.string().regex(KEY_PATH, `a key is ${KEY_PATH_HINT}`);
export type KeyPath = string;

/** The longest key value: it is part of a pool object's name. */
export const LIMIT_KEY_MAX = 256;

export interface KeySource {
  payload: unknown;
  scope?: { type: string; id: string };
  concurrencyKey?: string;
}

/** The key value of a job, or why it has none (`path` is the enqueue field to name). */
export type LimitKey = { ok: true; key: string } | { ok: false; path: string; message: string };

export function limitKeyOf(path: KeyPath, job: KeySource): LimitKey {
  if (job.concurrencyKey !== undefined) return { ok: true, key: job.concurrencyKey };
  if (path === "concurrencyKey") return { ok: false, path: "concurrencyKey", message: "this type's jobs are keyed by the enqueue's concurrencyKey: give one" };
  if (path === "scope.id" || path === "scope.type") {
    if (!job.scope) return { ok: false, path: "scope", message: `this type's jobs are keyed by ${path}: give a scope (or a concurrencyKey)` };
    return { ok: true, key: path === "scope.id" ? job.scope.id : job.scope.type };
  }
  let v: unknown = job.payload;
  for (const field of path.split(".").slice(1)) {
    v = v !== null && typeof v === "object" && !Array.isArray(v) && Object.hasOwn(v, field) ? (v as Record<string, unknown>)[field] : undefined;
  }
  if (v === undefined || v === null) return { ok: false, path, message: `this type's jobs are keyed by ${path}, which the payload does not have (give it, or a concurrencyKey)` };
  if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
    return { ok: false, path, message: `${path} keys this type's limits: it must be a string, number or boolean, not ${Array.isArray(v) ? "an array" : "an object"}` };
  }
  const key = String(v);
  if (key.length === 0 || key.length > LIMIT_KEY_MAX) return { ok: false, path, message: `${path} keys this type's limits: it must be 1-${LIMIT_KEY_MAX} characters` };
  return { ok: true, key };
}
