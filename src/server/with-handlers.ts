/**
 * The config a Worker with in-Worker handlers runs: createQueue({ config,
 * handlers }) gives each handler's type the loopback binding before the
 * config is checked, so `batchSize`, `leaseMs` and topic consumers hold for
 * those types as for any pushed one. `edgequeue check` applies this same
 * function to the handlers it finds in the Worker's main module, so it
 * refuses exactly what the Worker refuses (and, when it cannot find them, to
 * every type that might be one of theirs, so as to refuse nothing for that).
 *
 * @module
 */
import { CODE_SOURCE, ConfigError, type ConfigSource } from "../config/load";
import { formatPath } from "../job/json-safe";
import { LOCAL_HANDLERS } from "./bindings";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * withHandlers: `config` with each of `types` pushed to the loopback binding; a type that also has a
 * `binding` is refused (ConfigError). A config, a `types` or a type setting that is not an object is left
 * as it is, so the config's own check names it rather than this hiding it.
 */
export function withHandlers<C>(config: C, types: readonly string[], source: ConfigSource = CODE_SOURCE): C {
  if (types.length === 0 || !isRecord(config)) return config;
  const declared = config.types ?? {};
  if (!isRecord(declared)) return config;
  const problems = types
    .filter((t) => isRecord(declared[t]) && declared[t].binding !== undefined)
    .map((t) => `  - ${source.root}.types${formatPath([t])}.binding: the type also has a handler in this Worker (createQueue's handlers); give it one or the other`);
  if (problems.length) throw new ConfigError(`Invalid config in ${source.where}:\n${problems.join("\n")}`);
  const pushed: Record<string, unknown> = { ...declared };
  for (const t of types) {
    const settings = pushed[t] ?? {};
    if (isRecord(settings)) pushed[t] = { ...settings, binding: LOCAL_HANDLERS };
  }
  return { ...config, types: pushed };
}

/**
 * mayBeHandled: the types an in-Worker handler could be pushing — declared without a binding, or a topic's
 * consumer — for `edgequeue check` when it cannot load the Worker's main module to know which are.
 */
export function mayBeHandled(config: unknown): string[] {
  if (!isRecord(config)) return [];
  const types = isRecord(config.types) ? config.types : {};
  const unbound = (t: string) => !(isRecord(types[t]) && types[t].binding !== undefined);
  const consumers = Object.values(isRecord(config.topics) ? config.topics : {}).flatMap((t) => (isRecord(t) && Array.isArray(t.consumers) ? t.consumers : []));
  return [...new Set([...Object.keys(types), ...consumers.filter((c): c is string => typeof c === "string")])].filter(unbound);
}
