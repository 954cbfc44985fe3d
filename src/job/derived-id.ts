/**
 * fnv128Hex: 128 bits from two 64-bit FNV-1a passes over the UTF-8 input, as 32 hex digits. Synchronous (Web
 * Crypto's digests are not, and ids are made inside SQLite transactions), deterministic, well spread; not for
 * secrets. The handler's `ctx.uuid` is made from it.
 *
 * @module
 */
export function fnv128Hex(input: string): string {
  const bytes = new TextEncoder().encode(input);
  const fnv = (offset: bigint) => {
    let h = offset;
    for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
    return h;
  };
  return fnv(0xcbf29ce484222325n).toString(16).padStart(16, "0") + fnv(0x84222325cbf29ce4n).toString(16).padStart(16, "0");
}

/**
 * hash128Hex: 128 bits as 32 hex digits from four 32-bit lanes mixed with Math.imul (bryc's cyrb128): as well
 * spread as fnv128Hex for ids and some ten times faster (no BigInt), which a fan-out of 1,000 children made inside
 * one transaction notices. Not for secrets; fnv128Hex stays for ctx.uuid, whose values jobs already hold.
 */
export function hash128Hex(input: string): string {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < input.length; i++) {
    const k = input.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1, h2, h3, h4].map((h) => (h >>> 0).toString(16).padStart(8, "0")).join("");
}

/**
 * childLocalId: a child job's local id (ctx.invoke), from its parent's id and the invoke's position in its journal —
 * so an enqueue owed twice, or replayed, creates one child, and a name used again (an invoke in a loop) another. The
 * name adds nothing: a position holds one name for good (another is nondeterminism). The parent's part is hashed
 * once for a fan-out's children (the last parent's is kept).
 */
export function childLocalId(parentId: string, seq: number): string {
  if (parentId !== lastParent.id) lastParent = { id: parentId, hash: hash128Hex(parentId) };
  return `child-${lastParent.hash}-${seq.toString(36)}`;
}
let lastParent = { id: "", hash: "" };
