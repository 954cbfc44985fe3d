/**
 * fnv128Hex: 128 bits from two 64-bit FNV-1a passes over the UTF-8 input, as 32 hex digits. Synchronous (Web
 * Crypto's digests are not, and ids are made inside SQLite transactions), deterministic, well spread; not for
 * secrets. The handler's `ctx.uuid` and the ids of child jobs and failure handlers are made from it.
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

/** childLocalId: a child job's local id (ctx.invoke), from its parent's id and the step's name — so an enqueue owed twice, or replayed, creates one child. */
export function childLocalId(parentId: string, step: string): string {
  return `child-${fnv128Hex(`${parentId}\u0000${step}`)}`;
}
