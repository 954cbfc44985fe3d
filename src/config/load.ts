/**
 * Reading the config, once per isolate: from the `EDGEQUEUE_CONFIG` var (an
 * object in the wrangler config's vars, or a JSON string) or from the object
 * given to `createQueue({ config })` (docs/configuration.md "Configuration"). A bad config
 * throws a ConfigError whose message lists every problem with its path, says
 * where the config came from, and offers the nearest known key for a
 * misspelled one, so `wrangler dev`, `wrangler deploy` and `edgequeue check`
 * fail with something a person can act on.
 *
 * @module
 */
import { formatPath } from "../job/json-safe";
import { unknownKeyHint } from "./key-hints";
import { ConfigSchema, resolveConfig, type QueueConfig } from "./schema";

export const CONFIG_VAR = "EDGEQUEUE_CONFIG";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Where a config came from: the name its paths start with, and the place a person edits it. */
export interface ConfigSource {
  /** The first segment of every path in a message: `EDGEQUEUE_CONFIG.types["a"]`, `config.types["a"]`. */
  root: string;
  /** `in <where>` ends the message's first line. */
  where: string;
}

/** The var: set in wrangler.toml / wrangler.jsonc `vars`, or in `.dev.vars` (which replaces the whole var, not merges into it). */
export const VAR_SOURCE: ConfigSource = { root: CONFIG_VAR, where: "the EDGEQUEUE_CONFIG var (wrangler config `vars`, or .dev.vars)" };
/** The object given to createQueue (edgequeue.config.ts in a project `edgequeue init` wrote). */
export const CODE_SOURCE: ConfigSource = { root: "config", where: "the config given to createQueue (edgequeue.config.ts)" };

const cache = new Map<unknown, QueueConfig>();

/** loadConfig parses `env.EDGEQUEUE_CONFIG` (an object, a JSON string, or absent for defaults). */
export function loadConfig(env: { EDGEQUEUE_CONFIG?: unknown }): QueueConfig {
  const raw = env.EDGEQUEUE_CONFIG;
  const hit = cache.get(raw);
  if (hit) return hit;
  const config = parseConfig(raw, configSourceOf(raw));
  cache.set(raw, config);
  return config;
}

/** A config createQueue was given in code carries its source, so the messages point at the file a person edits. */
const codeConfigs = new WeakSet<object>();

/** fromCode: mark a config object as given in code (createQueue does, before it puts it in the env). */
export function fromCode<T extends object>(config: T): T {
  codeConfigs.add(config);
  return config;
}

function configSourceOf(raw: unknown): ConfigSource {
  return typeof raw === "object" && raw !== null && codeConfigs.has(raw) ? CODE_SOURCE : VAR_SOURCE;
}

/** What a person adds to their wrangler config for a missing binding, by kind. */
const BINDING_HINT = {
  service: (name: string) => `add a service binding to wrangler.jsonc: "services": [{ "binding": "${name}", "service": "<the handler Worker's name>", "entrypoint": "<its handlers class>" }] ([[services]] in wrangler.toml)`,
  analytics: (name: string) => `add to wrangler.jsonc: "analytics_engine_datasets": [{ "binding": "${name}", "dataset": "edgequeue" }]`,
};

/** present: a binding is there — an object, or a callable stub (a loopback binding of ctx.exports is one). */
export function present(v: unknown): boolean {
  return (typeof v === "object" && v !== null) || typeof v === "function";
}

/**
 * checkBindings: every binding the config names must exist in the Worker's
 * env, so a typo fails at startup instead of on the first dispatch.
 */
export function checkBindings(config: QueueConfig, env: object, source: ConfigSource = VAR_SOURCE): void {
  const problem = bindingsProblem(config, env, source);
  if (problem) throw new ConfigError(problem);
}

/** bindingsProblem: the message for the bindings the config names that the env lacks, or null. */
export function bindingsProblem(config: QueueConfig, env: object, source: ConfigSource = VAR_SOURCE): string | null {
  const problems = missingBindings(config, env, source);
  return problems.length ? `Invalid config in ${source.where}:\n${problems.join("\n")}` : null;
}

/** missingBindings: one line per binding the config names that the env lacks. */
function missingBindings(config: QueueConfig, env: object, source: ConfigSource = VAR_SOURCE): string[] {
  const problems: string[] = [];
  const has = (name: string) => present((env as Record<string, unknown>)[name]);
  for (const [type, t] of Object.entries(config.types)) {
    if (t.binding && !has(t.binding)) problems.push(`  - ${source.root}.types${formatPath([type])}.binding: no binding named ${t.binding}; ${BINDING_HINT.service(t.binding)}`);
  }
  if (config.observer && !has(config.observer)) problems.push(`  - ${source.root}.observer: no binding named ${config.observer}; ${BINDING_HINT.service(config.observer)}`);
  if (config.analytics && !has(config.analytics)) problems.push(`  - ${source.root}.analytics: no binding named ${config.analytics}; ${BINDING_HINT.analytics(config.analytics)}`);
  return problems;
}

export function parseConfig(raw: unknown, source: ConfigSource = VAR_SOURCE): QueueConfig {
  let value = raw ?? {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (e) {
      throw new ConfigError(`${source.root} is not valid JSON: ${(e as Error).message}`);
    }
  }
  const parsed = ConfigSchema.safeParse(value);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const at = `${source.root}${i.path.length ? "." + formatPath(i.path) : ""}`;
      const hint = i.code === "unrecognized_keys" ? unknownKeyHint(i.path, i.keys) : "";
      // A refused record key (a type, topic or pool name): what is wrong with it, not zod's "Invalid key in record".
      const message = i.code === "invalid_key" ? i.issues.map((k) => k.message).join("; ") || i.message : i.message;
      return `  - ${at}: ${message}${hint}`;
    });
    throw new ConfigError(`Invalid config in ${source.where}:\n${lines.join("\n")}`);
  }
  return resolveConfig(parsed.data);
}
