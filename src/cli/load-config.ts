/**
 * Finding and reading a queue config offline, for `edgequeue check`: a
 * config module (edgequeue.config.ts and friends, bundled with the esbuild
 * that wrangler installs, its default export), a JSON file, or a wrangler
 * config's `vars.EDGEQUEUE_CONFIG` (wrangler.jsonc, wrangler.json,
 * wrangler.toml) — and the wrangler config beside it, whose bindings the
 * config's names are checked against and whose `main` module is loaded the
 * same way, bundled for Node (worker-handlers.ts).
 *
 * @module
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { UsageError } from "./output";

export const CONFIG_MODULES = ["edgequeue.config.ts", "edgequeue.config.mts", "edgequeue.config.js", "edgequeue.config.mjs"];
export const WRANGLER_CONFIGS = ["wrangler.jsonc", "wrangler.json", "wrangler.toml"];

/** What a wrangler config says that the queue cares about. */
export interface WranglerConfig {
  file: string;
  services: string[];
  analytics: string[];
  durableObjects: { name: string; class_name: string }[];
  migrations: { tag: string; new_sqlite_classes?: string[]; new_classes?: string[] }[];
  vars: Record<string, unknown>;
  /** The Worker's main module, as written (relative to the wrangler config's folder). */
  main?: string;
}

export function findFirst(dir: string, names: readonly string[]): string | null {
  for (const n of names) if (existsSync(path.join(dir, n))) return path.join(dir, n);
  return null;
}

export function readWrangler(file: string): WranglerConfig {
  const text = readFileSync(file, "utf8");
  let raw: Record<string, any>;
  if (file.endsWith(".toml")) {
    try {
      raw = parseToml(text) as Record<string, any>;
    } catch (e) {
      throw new UsageError(`${file} is not valid TOML: ${(e as Error).message}`);
    }
  } else {
    const errors: ParseError[] = [];
    raw = parseJsonc(text, errors, { allowTrailingComma: true }) as Record<string, any>;
    if (errors.length) throw new UsageError(`${file} is not valid JSONC: ${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset}`);
  }
  return {
    file,
    services: (raw.services ?? []).map((s: { binding: string }) => s.binding),
    analytics: (raw.analytics_engine_datasets ?? []).map((s: { binding: string }) => s.binding),
    durableObjects: raw.durable_objects?.bindings ?? [],
    migrations: raw.migrations ?? [],
    vars: raw.vars ?? {},
    main: typeof raw.main === "string" ? raw.main : undefined,
  };
}

/** importModule: a config module's default export, bundled first (TypeScript, its imports) with the project's esbuild. */
async function importModule(file: string): Promise<unknown> {
  // Plain JavaScript is imported as it is; TypeScript is bundled first.
  if (/\.m?js$/.test(file)) return defaultOf(file, (await import(pathToFileURL(file).href)) as { default?: unknown });
  return defaultOf(file, await importBundled(file));
}

/** wrangler's default module rules: these imports are text or bytes in a Worker, so they are here too. */
const WRANGLER_LOADERS = { ".txt": "text", ".html": "text", ".sql": "text", ".bin": "binary" } as const;

/**
 * importBundled: a module's exports, bundled first with the project's esbuild (TypeScript, its imports, the
 * package's Node build of edgequeue/handler). A `cloudflare:` module exists only in workerd: it is a stub whose
 * `env` is undefined, which is how createQueue knows it runs outside a Worker (it logs nothing then).
 */
export async function importBundled(file: string): Promise<Record<string, unknown>> {
  const esbuild = await findEsbuild(file);
  const out = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    logLevel: "silent",
    loader: WRANGLER_LOADERS,
    plugins: [
      {
        name: "workers-stub",
        setup(b) {
          b.onResolve({ filter: /^cloudflare:/ }, (a) => ({ path: a.path, namespace: "stub" }));
          b.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export const env = undefined; export class DurableObject {}; export class WorkerEntrypoint {}; export class RpcTarget {};", loader: "js" }));
        },
      },
    ],
  });
  const dir = mkdtempSync(path.join(tmpdir(), "edgequeue-check-"));
  try {
    const bundled = path.join(dir, "module.mjs");
    writeFileSync(bundled, out.outputFiles[0]!.text);
    return (await import(pathToFileURL(bundled).href)) as Record<string, unknown>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function defaultOf(file: string, mod: { default?: unknown }): unknown {
  if (mod.default === undefined) throw new UsageError(`${file} has no default export: export default defineConfig({ ... })`);
  return mod.default;
}

/** findEsbuild: the project's (wrangler installs it), else the one beside edgequeue itself. */
async function findEsbuild(file: string): Promise<typeof import("esbuild")> {
  for (const from of [path.join(path.dirname(file), "package.json"), fileURLToPath(import.meta.url)]) {
    try {
      return (await import(pathToFileURL(createRequire(from).resolve("esbuild")).href)) as typeof import("esbuild");
    } catch {
      // the next place
    }
  }
  throw new UsageError(`reading ${path.basename(file)} needs esbuild, which wrangler installs: run npm install -D wrangler in the project (or check a JSON config)`);
}

export interface FoundConfig {
  /** The file the config came from. */
  file: string;
  /** Given in code (a module) or in the EDGEQUEUE_CONFIG var (a wrangler config or JSON file). */
  kind: "code" | "var";
  raw: unknown;
}

/** readConfig: the config in `file`, or the first of the usual places in `dir`. */
export async function readConfig(dir: string, file?: string): Promise<FoundConfig> {
  const at = file ? path.resolve(dir, file) : (findFirst(dir, CONFIG_MODULES) ?? findFirst(dir, WRANGLER_CONFIGS));
  if (!at) throw new UsageError(`no config here: looked for ${[...CONFIG_MODULES, ...WRANGLER_CONFIGS].join(", ")} in ${dir}; name one: edgequeue check <file>`);
  if (!existsSync(at)) throw new UsageError(`no such file: ${at}`);
  const base = path.basename(at);
  if (/\.(m?ts|m?js)$/.test(base)) return { file: at, kind: "code", raw: await importModule(at) };
  if (/^wrangler\.(jsonc?|toml)$/.test(base)) return { file: at, kind: "var", raw: readWrangler(at).vars.EDGEQUEUE_CONFIG };
  if (base.endsWith(".json")) {
    try {
      return { file: at, kind: "var", raw: JSON.parse(readFileSync(at, "utf8")) };
    } catch (e) {
      throw new UsageError(`${at} is not valid JSON: ${(e as Error).message}`);
    }
  }
  throw new UsageError(`${at}: give a config module (.ts, .js), a JSON file, or a wrangler config`);
}
