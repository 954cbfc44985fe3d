/**
 * The listing cursor: where to resume, as `{h: home, s: seq}`. `s >= 0`
 * resumes inside home `h` after that seq; `s = -1` means `h` is finished and
 * the next page starts at the home after it. Opaque to callers (base64url JSON).
 *
 * @module
 */
import { QueueError } from "../errors";

export interface Cursor {
  h: string;
  s: number;
}

export function encodeCursor(c: Cursor): string {
  return btoa(JSON.stringify(c)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor(text: string): Cursor {
  try {
    const value: unknown = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/")));
    if (typeof value === "object" && value !== null) {
      const { h, s } = value as Record<string, unknown>;
      if (typeof h === "string" && typeof s === "number" && Number.isSafeInteger(s) && s >= -1) return { h, s };
    }
  } catch {
    // fall through to the error below
  }
  throw new QueueError("invalid_request", "cursor: not a cursor returned by this API", [{ path: "cursor", message: "not a cursor returned by this API" }]);
}
