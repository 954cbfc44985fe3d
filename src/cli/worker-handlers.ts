/**
 * The job types a Worker runs itself, for `edgequeue check`: createQueue gives
 * each of them the loopback binding before it checks the config
 * (server/with-handlers.ts), so check must know them to refuse exactly what
 * the Worker refuses. They are read from the Worker's main module (the
 * wrangler config's `main`), bundled and loaded in Node: the class it exports
 * as EdgeQueueHandlers (a defineHandlers class) lists them in `jobTypes`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { LOCAL_HANDLERS } from "../server/bindings";
import { importBundled, type WranglerConfig } from "./load-config";

/** The types handled in the Worker, or why they could not be known. */
export type HandlerTypes = { known: true; types: readonly string[] } | { known: false; why: string };

/** workerHandlerTypes: the in-Worker handlers' types of the Worker `wrangler` describes (dir: what paths are shown relative to). */
export async function workerHandlerTypes(wrangler: WranglerConfig | null, dir: string): Promise<HandlerTypes> {
  if (!wrangler) return { known: false, why: "no wrangler config names the Worker's main module" };
  const wname = path.relative(dir, wrangler.file) || wrangler.file;
  if (!wrangler.main) return { known: false, why: `${wname} names no main module` };
  const main = path.resolve(path.dirname(wrangler.file), wrangler.main);
  const mname = path.relative(dir, main) || main;
  if (!existsSync(main)) return { known: false, why: `${mname}, the main module ${wname} names, does not exist` };
  let exports: Record<string, unknown>;
  try {
    exports = await importBundled(main);
  } catch (e) {
    return { known: false, why: `${mname} could not be loaded in Node (${firstError(e)})` };
  }
  const handlers = exports[LOCAL_HANDLERS];
  // No export: createQueue was given no handlers (or the Worker answers 503 until it exports them, saying so).
  if (handlers === undefined) return { known: true, types: [] };
  const types = (handlers as { jobTypes?: unknown }).jobTypes;
  if (Array.isArray(types) && types.every((t) => typeof t === "string")) return { known: true, types };
  return { known: false, why: `${mname} exports ${LOCAL_HANDLERS} without the jobTypes list of a defineHandlers class` };
}

/** firstError: what went wrong first — esbuild's first build error with its place, or the thrown error's first line. */
function firstError(e: unknown): string {
  const built = (e as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors?.[0];
  if (built) return built.location ? `${built.location.file}:${built.location.line}: ${built.text}` : built.text;
  return String((e as Error)?.message ?? e).split("\n")[0]!;
}
