/**
 * A job's progress (docs/handlers.md "Progress"): `ctx.progress(value)` with a number from 0 to 100 or a JSON
 * object of at most PROGRESS_MAX_BYTES, kept on the job (the latest value only) and told to its watchers as
 * `job:progress`. One shape and one check for the SDK that reports it, the binding and HTTP calls that carry it,
 * and the scope object that keeps it.
 *
 * @module
 */
import { isJsonObject, type JsonObject } from "./json-safe";

/** A progress object's JSON is at most this many UTF-8 bytes. */
export const PROGRESS_MAX_BYTES = 4096;
/**
 * An attempt sends its progress at most once per this interval; the values reported meanwhile are coalesced into the
 * latest (runtime/progress.ts): a handler reporting in a tight loop costs a few writes a second, not one per call.
 */
export const PROGRESS_INTERVAL_MS = 250;

export type Progress = number | JsonObject;

/** progressError: why `value` is no progress (naming `path`), or null when it is one. */
export function progressError(value: unknown, path = "progress"): string | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 && value <= 100 ? null : `${path} must be a number from 0 to 100 (got ${value})`;
  if (!isJsonObject(value)) return `${path} must be a number from 0 to 100 or a JSON object`;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (e) {
    return `${path} is not JSON-serializable: ${String(e)}`;
  }
  const bytes = new TextEncoder().encode(json).byteLength;
  return bytes > PROGRESS_MAX_BYTES ? `${path} is ${bytes} bytes of JSON; the limit is ${PROGRESS_MAX_BYTES}` : null;
}

/** progressJsonError: progressError of a value that came as JSON text (a binding call, an HTTP body already parsed is checked by its schema). */
export function progressJsonError(json: string, path = "progress"): string | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return `${path} is not JSON`;
  }
  return progressError(value, path);
}
