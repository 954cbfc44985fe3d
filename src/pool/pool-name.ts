/**
 * Pool object names: a type's `concurrency` is `pool:type:<type>`, a declared
 * resource pool `pool:<name>`, and a `notWhileRunning` guard between two types
 * `guard:<a>|<b>` (sorted, so both sides share one object). A keyed limit has
 * one object per key value: its name and `#<key>` (docs/guards.md "Keyed limits").
 *
 * @module
 */
const enc = encodeURIComponent;

export function typePoolName(type: string): string {
  return `pool:type:${enc(type)}`;
}

export function resourcePoolName(name: string): string {
  return `pool:${enc(name)}`;
}

export function guardName(a: string, b: string): string {
  const [x, y] = [a, b].sort();
  return `guard:${enc(x!)}|${enc(y!)}`;
}

/** keyedPoolName: the object of one key value of a keyed limit. `#` never appears in an encoded name otherwise. */
export function keyedPoolName(pool: string, key: string): string {
  return `${pool}#${enc(key)}`;
}

export function isKeyedPool(name: string): boolean {
  return name.includes("#");
}

/** keyedParts: a key value's object name as the limit's own object name and the key value; null for any other. */
export function keyedParts(name: string): { base: string; key: string } | null {
  const at = name.indexOf("#");
  if (at < 0) return null;
  try {
    return { base: name.slice(0, at), key: decodeURIComponent(name.slice(at + 1)) };
  } catch {
    return null;
  }
}
