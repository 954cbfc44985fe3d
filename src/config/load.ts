/**
 * Reading the config from the environment, once per isolate. A bad config
 * throws a ConfigError whose message lists every problem with its path, so
 * `wrangler dev` and `wrangler deploy` fail at startup with something a person
 * can act on.
 *
 * @module
 */
import { formatPath } from "../job/json-safe";
import { ConfigSchema, resolveConfig, type QueueConfig } from "./schema";

export const CONFIG_VAR = "EDGEQUEUE_CONFIG";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

const cache = new Map<unknown, QueueConfig>();

/** loadConfig parses `env.EDGEQUEUE_CONFIG` (an object, a JSON string, or absent for defaults). */
export function loadConfig(env: { EDGEQUEUE_CONFIG?: unknown }): QueueConfig {
  const raw = env.EDGEQUEUE_CONFIG;
  const hit = cache.get(raw);
  if (hit) return hit;
  const config = parseConfig(raw);
  cache.set(raw, config);
  return config;
}

/**
 * checkBindings: every binding the config names must exist in the Worker's
 * env, so a typo fails at startup instead of on the first dispatch.
 */
export function checkBindings(config: QueueConfig, env: object): void {
  const problems: string[] = [];
  const has = (name: string) => typeof (env as Record<string, unknown>)[name] === "object" && (env as Record<string, unknown>)[name] !== null;
  for (const [type, t] of Object.entries(config.types)) {
    if (t.binding && !has(t.binding)) {
      problems.push(`  - ${CONFIG_VAR}.types${formatPath([type])}.binding: no binding named ${t.binding}; add a [[services]] entry with binding = "${t.binding}" to wrangler.toml`);
    }
  }
  if (config.observer && !has(config.observer)) {
    problems.push(`  - ${CONFIG_VAR}.observer: no binding named ${config.observer}; add a [[services]] entry with binding = "${config.observer}" to wrangler.toml`);
  }
  if (config.analytics && !has(config.analytics)) {
    problems.push(`  - ${CONFIG_VAR}.analytics: no binding named ${config.analytics}; add an [[analytics_engine_datasets]] entry with binding = "${config.analytics}" to wrangler.toml`);
  }
  if (problems.length) throw new ConfigError(`Invalid ${CONFIG_VAR} in wrangler.toml:\n${problems.join("\n")}`);
}

export function parseConfig(raw: unknown): QueueConfig {
  let value = raw ?? {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (e) {
      throw new ConfigError(`${CONFIG_VAR} is not valid JSON: ${(e as Error).message}`);
    }
  }
  const parsed = ConfigSchema.safeParse(value);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  - ${CONFIG_VAR}${i.path.length ? "." + formatPath(i.path) : ""}: ${i.message}`);
    throw new ConfigError(`Invalid ${CONFIG_VAR} in wrangler.toml:\n${lines.join("\n")}`);
  }
  return resolveConfig(parsed.data);
}
