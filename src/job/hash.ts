/**
 * hash64: 16 hex characters from a string — FNV-1a twice, with two primes — for names that must be short and
 * stable but need not be secret: a WebSocket tag (scope/watching/watch-messages.ts), a span or trace id derived from a job
 * (job/trace.ts). Synchronous, so the handler SDK and the queue derive the same ids without a round trip.
 *
 * @module
 */
export function hash64(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
