/**
 * Pool object names. A type's `concurrency` is the implicit pool
 * `pool:type:<type>`; declared resource pools (a later capability) get their own.
 *
 * @module
 */
export function typePoolName(type: string): string {
  return `pool:type:${encodeURIComponent(type)}`;
}
