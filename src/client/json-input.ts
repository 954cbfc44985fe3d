/**
 * What a client sends is JSON, so it drops `undefined` properties as
 * `JSON.stringify` does: `{ payload: { x: undefined } }` enqueues `{}` over RPC
 * as over HTTP. RPC's structured clone would carry the `undefined`, and the API
 * refuses values JSON cannot carry (naming them) — those still are refused:
 * functions, symbols, NaN, cycles are left for the queue to name.
 *
 * @module
 */

/** withoutUndefined: a copy of plain objects and arrays with undefined properties removed, and undefined array items null (as in JSON). */
export function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : withoutUndefined(v))) as T;
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = withoutUndefined(v);
  return out as T;
}
