/**
 * An object's own name, kept in its own storage.
 *
 * Every object is reached by name (`getByName`), and `ctx.id.name` carries it —
 * but not in an instance that its alarm woke cold (after a restart, a deploy or
 * an eviction): there the id has no name, and it stays nameless for the life of
 * that instance, even when named requests arrive later. So each object writes
 * its name down the first time it is reached by name and reads it back when the
 * runtime does not hand it over (docs/guarantees.md "Guarantees and limits").
 *
 * @module
 */

const KEY = "edgequeue:name";

/**
 * ownName: the name this object was reached by, or the one it kept; null only for an
 * object that has never been reached by name since it started keeping it. Synchronous
 * (the SQLite-backed object's KV store), so a constructor can call it.
 */
export function ownName(ctx: DurableObjectState): string | null {
  const given = ctx.id.name;
  const kept = ctx.storage.kv.get<string>(KEY) ?? null;
  if (given !== undefined && given !== kept) ctx.storage.kv.put(KEY, given);
  return given ?? kept;
}

/** keepName: write down a name learnt another way (an object older than ownName, woken cold). */
export function keepName(ctx: DurableObjectState, name: string): void {
  ctx.storage.kv.put(KEY, name);
}
