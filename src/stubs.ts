/**
 * stubsOf: a namespace's stubs by object name, made once each. `getByName` hashes the name into the object's id on
 * every call; a keyed type's dispatcher asks a pool object per key value for every batch, and the hashing showed in
 * its profile. Bounded: past `max` names the oldest is dropped (a stub is cheap to make again).
 *
 * @module
 */
export function stubsOf<T extends Rpc.DurableObjectBranded | undefined>(ns: DurableObjectNamespace<T>, max = 1_000): (name: string) => DurableObjectStub<T> {
  const made = new Map<string, DurableObjectStub<T>>();
  return (name) => {
    let stub = made.get(name);
    if (stub) return stub;
    stub = ns.getByName(name);
    if (made.size >= max) made.delete(made.keys().next().value!);
    made.set(name, stub);
    return stub;
  };
}

/**
 * ObjectMethods: a Durable Object's methods as a caller holds them — every async method but `alarm` and `fetch` — as
 * scope/api.ts's ScopeRpc is. Their answers are plain data, which RPC passes as it is; typing a stub through the
 * runtime's Rpc.Stub instead costs the compiler a recursive walk of every answer (too deep for it, in places).
 */
export type ObjectMethods<T> = {
  [K in keyof T as K extends "alarm" | "fetch" ? never : T[K] extends (...args: never[]) => Promise<unknown> ? K : never]: T[K];
};
