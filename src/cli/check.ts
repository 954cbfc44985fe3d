/**
 * `edgequeue check [config]`: the config validated offline, with the checks
 * and messages the Worker gives at startup (config/load.ts), so CI and a
 * deploy script catch `concurreny = 10` before a deploy does — and, when a
 * wrangler config is beside it, every binding the config names and every
 * object and migration the queue needs, with "did you mean" for a misspelled
 * binding. A config given in code is checked with the job types the Worker's
 * main module handles itself (worker-handlers.ts), as createQueue checks it.
 *
 * @module
 */
import path from "node:path";
import { CODE_SOURCE, ConfigError, parseConfig, VAR_SOURCE, type ConfigSource } from "../config/load";
import { didYouMean, nearestTypes } from "../config/known-types";
import type { QueueConfig } from "../config/schema";
import { formatPath } from "../job/json-safe";
import { LOCAL_HANDLERS, QUEUE_MIGRATIONS, QUEUE_OBJECTS } from "../server/bindings";
import { mayBeHandled, withHandlers } from "../server/with-handlers";
import { findFirst, readConfig, readWrangler, WRANGLER_CONFIGS, type FoundConfig, type WranglerConfig } from "./load-config";
import { workerHandlerTypes } from "./worker-handlers";
import { Refused } from "./output";

export interface CheckResult {
  file: string;
  config: QueueConfig;
  wrangler: string | null;
  warnings: string[];
}

/** wranglerProblems: what the wrangler config lacks for this queue config (bindings it names, the queue's objects). */
export function wranglerProblems(config: QueueConfig, w: WranglerConfig, root: string): string[] {
  const problems: string[] = [];
  const hint = (name: string, known: string[]) => didYouMean(nearestTypes(name, known));
  const services = new Set(w.services);
  for (const [type, t] of Object.entries(config.types)) {
    if (t.binding && t.binding !== LOCAL_HANDLERS && !services.has(t.binding)) {
      problems.push(`  - ${root}.types${formatPath([type])}.binding: ${path.basename(w.file)} has no service binding named ${t.binding}${hint(t.binding, w.services)}`);
    }
  }
  if (config.observer && !services.has(config.observer)) problems.push(`  - ${root}.observer: ${path.basename(w.file)} has no service binding named ${config.observer}${hint(config.observer, w.services)}`);
  if (config.analytics && !w.analytics.includes(config.analytics)) {
    problems.push(`  - ${root}.analytics: ${path.basename(w.file)} has no analytics_engine_datasets binding named ${config.analytics}${hint(config.analytics, w.analytics)}`);
  }
  for (const o of QUEUE_OBJECTS) {
    const b = w.durableObjects.find((d) => d.name === o.binding);
    if (!b) problems.push(`  - ${path.basename(w.file)}: no Durable Object binding ${o.binding}; add { "name": "${o.binding}", "class_name": "${o.className}" } to durable_objects.bindings`);
    else if (b.class_name !== o.className) problems.push(`  - ${path.basename(w.file)}: the binding ${o.binding} names class ${b.class_name}; the queue's is ${o.className}`);
  }
  const migrated = new Set(w.migrations.flatMap((m) => [...(m.new_sqlite_classes ?? []), ...(m.new_classes ?? [])]));
  for (const m of QUEUE_MIGRATIONS) {
    const missing = m.new_sqlite_classes.filter((c) => !migrated.has(c));
    if (missing.length) problems.push(`  - ${path.basename(w.file)}: no migration creates ${missing.join(", ")}; add { "tag": "${m.tag}", "new_sqlite_classes": ${JSON.stringify(missing)} } to migrations`);
  }
  return problems;
}

/**
 * parseAsWorker: the config as the Worker checks it — with the main module's in-Worker handler types pushed
 * (server/with-handlers.ts, the function createQueue uses). A config in the EDGEQUEUE_CONFIG var has none: a
 * Worker given handlers reads its config from code. When the handlers cannot be known, a type that may be one of
 * them is not refused for it: the problems that depend on it become a warning that says why.
 */
async function parseAsWorker(found: FoundConfig, where: ConfigSource, wrangler: WranglerConfig | null, dir: string): Promise<{ config: QueueConfig; warnings: string[] }> {
  if (found.kind === "var") return { config: parseConfig(found.raw, where), warnings: [] };
  const handled = await workerHandlerTypes(wrangler, dir);
  if (handled.known) return { config: parseConfig(withHandlers(found.raw, handled.types, where), where), warnings: [] };
  try {
    return { config: parseConfig(found.raw, where), warnings: [] };
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    // Pushing every type that could be handled in the Worker only lifts refusals: what still fails, fails whatever it handles.
    const config = parseConfig(withHandlers(found.raw, mayBeHandled(found.raw), where), where);
    const lines = e.message.split("\n").slice(1).join("\n");
    return { config, warnings: [`${handled.why}, so the types it handles itself are unknown; the Worker refuses this unless it handles these:\n${lines}`] };
  }
}

/** check: read, validate, and hold against the wrangler config; throws Refused with every problem, or returns what it found. */
export async function check(dir: string, file?: string, wranglerFile?: string): Promise<CheckResult> {
  const found = await readConfig(dir, file);
  const source = found.kind === "code" ? CODE_SOURCE : VAR_SOURCE;
  const where = { root: source.root, where: path.relative(dir, found.file) || found.file };
  const wfile = wranglerFile ? path.resolve(dir, wranglerFile) : findFirst(path.dirname(found.file), WRANGLER_CONFIGS);
  const wrangler = wfile ? readWrangler(wfile) : null;
  let parsed: { config: QueueConfig; warnings: string[] };
  try {
    parsed = await parseAsWorker(found, where, wrangler, dir);
  } catch (e) {
    if (e instanceof ConfigError) throw new Refused(e.message);
    throw e;
  }
  const { config } = parsed;
  if (wrangler) {
    const problems = wranglerProblems(config, wrangler, where.root);
    const wname = path.relative(dir, wrangler.file) || wrangler.file;
    // The Worker refuses a config in code beside the var ("Two configs"): a deploy would not stop at it.
    if (found.kind === "code" && wrangler.vars.EDGEQUEUE_CONFIG !== undefined) {
      problems.push(`  - ${path.basename(wrangler.file)}: vars.EDGEQUEUE_CONFIG is a second config beside ${where.where}, and the Worker takes only one: remove the var`);
    }
    // "for <config>" only when the config is another file than the wrangler config itself.
    if (problems.length) throw new Refused(`Invalid setup in ${wname}${wname === where.where ? "" : ` for ${where.where}`}:\n${problems.join("\n")}`);
  }
  return { file: found.file, config, wrangler: wfile, warnings: [...parsed.warnings, ...config.warnings] };
}
