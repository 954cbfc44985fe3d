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
