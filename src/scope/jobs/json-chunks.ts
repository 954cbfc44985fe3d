/**
 * Statements that take a batch as one JSON parameter (`json_each(?)`: the
 * batch insert, the complete of a call) are cut into parts of at most
 * JSON_PARAM_MAX_BYTES (~2 MB at worst): Cloudflare documents 2 MB as the largest string a
 * Durable Object's SQLite takes, and a batch may carry 8 MiB of payloads.
 * Local workerd takes larger strings, so the cut is not seen locally.
 *
 * @module
 */

/**
 * A part's size, in UTF-16 code units (a string's length, cheap to read): at most 3 UTF-8 bytes each,
 * so 600,000 stay under the documented 2 MB with room for the JSON around the values.
 */
export const JSON_PARAM_MAX_BYTES = 600_000;

/** jsonChunks: consecutive parts of `items` whose `bytes` add up to at most `max` (an item larger than `max` goes alone). */
export function jsonChunks<T>(items: readonly T[], bytes: (item: T) => number, max = JSON_PARAM_MAX_BYTES): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let size = 0;
  for (const item of items) {
    const b = bytes(item);
    if (part.length > 0 && size + b > max) {
      parts.push(part);
      part = [];
      size = 0;
    }
    part.push(item);
    size += b;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}
