/**
 * The listing cursor: where to resume, as `{h: home, s: seq}`. `s >= 0`
 * resumes inside home `h` after that seq; `s = -1` means `h` is finished and
 * the next page starts at the home after it. Opaque to callers (base64url JSON).
 *
 * @module
 */
import { decodeText, encodeText } from "../base64url";
import { QueueError } from "../errors";

export interface Cursor {
  h: string;
  s: number;
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

export function decodeCursor(text: string): Cursor {
  try {
    const value = unpackJson(text);
    if (typeof value === "object" && value !== null) {
      const { h, s } = value as Record<string, unknown>;
      if (typeof h === "string" && typeof s === "number" && Number.isSafeInteger(s) && s >= -1) return { h, s };
    }
  } catch {
    // fall through to the error below
  }
  throw new QueueError("invalid_request", "cursor: not a cursor returned by this API", [{ path: "cursor", message: "not a cursor returned by this API" }]);
}
