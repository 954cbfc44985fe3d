/**
 * JSON safety for payloads and results: a value is accepted only if it would
 * survive `JSON.stringify` → `JSON.parse` unchanged. The first problem found is
 * reported with its path (`payload.items[2].at`), so a caller can fix it.
 *
 * @module
 */

/**
 * A JSON object as the API types it. The values are deliberately loose: the
 * check below is what guarantees JSON safety at run time, a recursive JSON
 * type makes the RPC stub types too deep for TypeScript, and `unknown` is not
 * accepted as serializable by them. The typed client narrows payloads per job
 * type.
 */
export type JsonObject = { [key: string]: any };

/** Deeper than this is refused: it is never real data and it protects the stack. */
export const JSON_MAX_DEPTH = 64;

export interface JsonProblem {
  /** Where, relative to the value: `["items", 2, "at"]`. */
  path: (string | number)[];
  problem: string;
}

/** jsonProblem returns the first reason `value` is not JSON-safe and where, or null when it is. */
export function jsonProblem(value: unknown): JsonProblem | null {
  return walk(value, [], 0, new Set());
}

type Path = (string | number)[];
const at = (path: Path, problem: string): JsonProblem => ({ path, problem });

function walk(value: unknown, path: Path, depth: number, seen: Set<object>): JsonProblem | null {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : at(path, `${value} is not a finite number`);
    case "undefined":
      return at(path, "undefined is not JSON");
    case "bigint":
      return at(path, "a bigint is not JSON");
    case "function":
    case "symbol":
      return at(path, `a ${typeof value} is not JSON`);
  }
  const obj = value as object;
  if (depth >= JSON_MAX_DEPTH) return at(path, `nested deeper than ${JSON_MAX_DEPTH} levels`);
  if (seen.has(obj)) return at(path, "circular reference");
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const p = walk(obj[i], [...path, i], depth + 1, seen);
        if (p) return p;
      }
      return null;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      const name = (obj as { constructor?: { name?: string } }).constructor?.name ?? "object";
      return at(path, `a ${name} is not a plain JSON object`);
    }
    for (const key of Object.keys(obj)) {
      const p = walk((obj as Record<string, unknown>)[key], [...path, key], depth + 1, seen);
      if (p) return p;
    }
    return null;
  } finally {
    seen.delete(obj);
  }
}

/** formatPath renders a path for people: `payload.items[2]["odd key"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_$][\w$]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

/** isJsonObject: a plain object (not an array, not null). Structure only; pair with jsonProblem. */
export function isJsonObject(value: unknown): value is JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
