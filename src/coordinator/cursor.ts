/**
 * Cursors: opaque to callers (base64url JSON), made and read back here. The
 * job listing's is `{h: home, s: seq}`: `s >= 0` resumes inside home `h` after
 * that seq; `s = -1` means `h` is finished and the next page starts at the
 * home after it; `c: 1` says the listing is past the homes it reads directly
 * and goes on with the catalog's (coordinator/home-walk.ts). Other
 * listings read theirs with `readCursor`.
 *
 * @module
 */
import { decodeText, encodeText } from "../base64url";
import { QueueError } from "../errors";

export interface Cursor {
  h: string;
  s: number;
  /** Past the homes read directly: the catalog's homes, after `h`. */
  c?: 1;
}

/** packJson / unpackJson: any cursor's opaque form, base64url JSON (unpack throws on anything else). */
export function packJson(value: unknown): string {
  return encodeText(JSON.stringify(value));
}

export function unpackJson(text: string): unknown {
  const json = decodeText(text);
  if (json === null) throw new SyntaxError("not base64url UTF-8");
  return JSON.parse(json);
}

export function encodeCursor(c: Cursor): string {
  return packJson(c);
}

/**
 * readCursor: a cursor this API made, read back — `parse` says whether the value is one of its kind
 * (null: not) — or a 400 naming `cursor`. Every listing's cursor is read here (jobs, a bulk retry's
 * pages, dead deliveries).
 */
export function readCursor<T>(text: string, parse: (value: Record<string, unknown>) => T | null): T {
  try {
    const value = unpackJson(text);
    const read = typeof value === "object" && value !== null && !Array.isArray(value) ? parse(value as Record<string, unknown>) : null;
    if (read !== null) return read;
  } catch {
    // fall through to the error below
  }
  throw invalidCursor();
}

/** invalidCursor: a cursor this listing did not make (or made for another listing). */
export function invalidCursor(): QueueError {
  return new QueueError("invalid_request", "cursor: not a cursor returned by this listing", [{ path: "cursor", message: "not a cursor returned by this listing" }]);
}

export function decodeCursor(text: string): Cursor {
  return readCursor(text, ({ h, s, c }) => {
    if (typeof h !== "string" || typeof s !== "number" || !Number.isSafeInteger(s) || s < -1 || (c !== undefined && c !== 1)) return null;
    return c === 1 ? { h, s, c } : { h, s };
  });
}
