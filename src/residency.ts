/**
 * Data residency (docs/operating.md "Data residency"): the config's `residency` keeps the queue's objects — all of
 * them (`jurisdiction`), or a scope type's scope objects (`scopeTypes`) — in a Cloudflare jurisdiction (`eu`,
 * `fedramp`), by reaching each object through `namespace.jurisdiction(...)`. Every object is reached by name, so
 * routing the namespaces of the env is all it takes: queueEnv (server/create-queue.ts) routes them for the Worker,
 * its RPC entrypoint and every object alike.
 *
 * The local runtime (workerd) does not implement jurisdictions ("Jurisdiction restrictions are not implemented in
 * workerd"): there each object is reached plainly, and the first such call logs `residency:not_enforced_here` once.
 * The refusals of what would carry a payload from one jurisdiction to another (jurisdictionOfHome's callers) hold
 * everywhere.
 *
 * @module
 */
import type { QueueConfig } from "./config/schema";
import type { Env } from "./env";
import { describeJurisdiction, type Jurisdiction } from "./config/residency";
import { parseHome } from "./job/home";

export { JURISDICTIONS, jurisdictionOfScope, describeJurisdiction, type Jurisdiction } from "./config/residency";

/** jurisdictionOfHome: where a scope object lives — its scope type's jurisdiction, else the queue's; null: anywhere. */
export function jurisdictionOfHome(config: Pick<QueueConfig, "residency">, home: string): Jurisdiction | null {
  const h = parseHome(home);
  const own = h?.kind === "scope" ? config.residency.scopeTypes[h.scope.type] : undefined;
  return own ?? config.residency.jurisdiction;
}


let warned = false;
const placed = new WeakMap<object, Map<string, DurableObjectNamespace>>();

/** inJurisdiction: the namespace whose objects live in `j` — the namespace itself where the runtime has none (local). */
export function inJurisdiction<T extends DurableObjectNamespace<any>>(ns: T, j: Jurisdiction): T {
  let byJ = placed.get(ns);
  if (!byJ) placed.set(ns, (byJ = new Map()));
  let out = byJ.get(j);
  if (!out) {
    try {
      out = ns.jurisdiction(j);
    } catch (e) {
      if (!/not implemented/i.test(String(e))) throw e;
      if (!warned) {
        warned = true;
        console.warn(JSON.stringify({ event: "residency:not_enforced_here", jurisdiction: j, why: String(e) }));
      }
      out = ns;
    }
    byJ.set(j, out);
  }
  return out as T;
}

/** routedScope: SCOPE reached by name, each name in its home's jurisdiction. */
/** The two ways an object is reached by name; typed loosely (the namespace's generics run too deep for a proxy). */
type ByName = { getByName(name: string, o?: unknown): unknown; idFromName(name: string): unknown };

function routedScope(ns: DurableObjectNamespace<any>, config: QueueConfig): DurableObjectNamespace<any> {
  const forName = (name: string): ByName => {
    const j = jurisdictionOfHome(config, name);
    return (j === null ? ns : inJurisdiction(ns, j)) as unknown as ByName;
  };
  return new Proxy(ns, {
    get(target, p) {
      if (p === "getByName") return (name: string, o?: unknown) => forName(name).getByName(name, o);
      if (p === "idFromName") return (name: string) => forName(name).idFromName(name);
      const v = Reflect.get(target, p) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The env's object namespaces: all the queue's, every one reached by name. */
const NAMESPACES = ["SCOPE", "CATALOG", "POOL", "SCHEDULE", "WAIT"] as const;

/** residentEnv: `e` (an env made for this queue, queueEnv's) with its namespaces routed as `config.residency` says. */
export function residentEnv(e: Env, config: QueueConfig): Env {
  const { jurisdiction, scopeTypes } = config.residency;
  if (jurisdiction === null && Object.keys(scopeTypes).length === 0) return e;
  for (const key of NAMESPACES) {
    const ns = e[key] as DurableObjectNamespace<any> | undefined;
    if (!ns) continue;
    const routed = key === "SCOPE" ? routedScope(ns, config) : jurisdiction === null ? ns : inJurisdiction(ns, jurisdiction);
    Object.defineProperty(e, key, { value: routed, configurable: true });
  }
  return e;
}

/**
 * crossingOf: why a payload may not go from the object `from` to the object `to` (their jurisdictions differ), or
 * null. A child job, an event wait's registration, a batch's parts, a schedule's jobs: each would copy a payload —
 * or a result back — from one jurisdiction to another.
 */
export function crossingOf(config: Pick<QueueConfig, "residency">, from: string, to: string): string | null {
  const a = jurisdictionOfHome(config, from);
  const b = jurisdictionOfHome(config, to);
  if (a === b) return null;
  return `it would carry data from ${describeJurisdiction(a)} to ${describeJurisdiction(b)} (the config's residency; docs/operating.md "Data residency")`;
}
