/**
 * The one size rule for JSON the queue stores (payloads, results): UTF-8
 * bytes of the JSON text against `limits.payloadMaxBytes`. Enqueue, schedule
 * writes, pull `complete` and pushed results all measure it here.
 *
 * @module
 */
import { QueueError } from "../errors";

/** `limits.payloadMaxBytes` when the config does not set it. */
export const PAYLOAD_MAX_BYTES_DEFAULT = 128 * 1024;

/** utf8Length without encoding when the string is clearly under the limit (3 bytes per UTF-16 unit at most). */
export function utf8Length(text: string, limit: number): number {
  if (text.length * 3 <= limit) return text.length;
  return new TextEncoder().encode(text).byteLength;
}

/** checkJsonSize returns the byte count, or throws `payload_too_large` naming the field. */
export function checkJsonSize(json: string, limit: number, path: string): number {
  const bytes = utf8Length(json, limit);
  if (bytes > limit) {
    throw new QueueError("payload_too_large", `${path} is ${bytes} bytes of JSON; the limit is ${limit}`, { path, bytes, limitBytes: limit });
  }
  return bytes;
}
