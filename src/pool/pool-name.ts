/**
 * Pool object names: a type's `concurrency` is `pool:type:<type>`, a declared
 * resource pool `pool:<name>`, and a `notWhileRunning` guard between two types
 * `guard:<a>|<b>` (sorted, so both sides share one object).
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
