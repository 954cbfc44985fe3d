/**
 * `edgequeue init <dir> [--package <spec>]`: from an empty folder to a
 * running, deployable queue (README "Start"). It writes the
 * project from the package's templates/init: wrangler.jsonc, src/index.ts,
 * edgequeue.config.ts, handlers (one with durable steps), their test, .dev.vars
 * with a dev token, .gitignore and a short README — and a package.json that
 * depends on edgequeue as the running CLI was installed (a semver range from a
 * registry, a `file:` path from a tarball; `--package` says otherwise) and on
 * the tool versions this release was tested with.
 *
 * @module
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import repo from "../../package.json";
import { UsageError } from "./output";

/** The local runtime's newest compatibility date (wrangler 4.86's workerd): `npm run dev` runs with it. */
export const DEV_COMPATIBILITY_DATE = "2026-04-20";

/** Files npm would not pack under their own names, written under them. */
const RENAMED: Record<string, string> = { gitignore: ".gitignore", "dev.vars": ".dev.vars" };

/** A `--package` (or a lockfile's `resolved`) that names something on disk rather than a version. */
const LOCAL = /^(\.|\/|[a-zA-Z]:[\\/])|\.(tgz|tar\.gz|tar)$/;

/** The package's root: dist/cli.js in the package, src/cli/init.ts in the repo; templates/ is at the root either way. */
export function packageRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const up of ["..", "../.."]) {
    const dir = path.resolve(here, up);
    if (existsSync(path.join(dir, "templates", "init"))) return dir;
  }
  throw new Error(`edgequeue's templates/init is missing beside ${here}`);
}

interface HiddenLockfile {
  packages?: Record<string, { resolved?: unknown } | undefined>;
}

/**
 * installedFrom: the tarball (or folder) npm installed the package at `root` from, or undefined. npm — and npx,
 * in its cache — records where each installed package came from in the hidden lockfile of the tree it installed
 * (node_modules/.package-lock.json): `resolved` is "file:<path from the tree>" for a tarball, a registry URL or
 * nothing (omit-lockfile-registry-resolved) for a registry. A checkout of this repo has no such file, and neither
 * has a tree another package manager installed: both count as the registry.
 */
export function installedFrom(root: string): string | undefined {
  for (let dir = path.dirname(root); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const lockfile = path.join(dir, ".package-lock.json");
    if (path.basename(dir) !== "node_modules" || !existsSync(lockfile)) continue;
    const tree = path.dirname(dir);
    let lock: HiddenLockfile;
    try {
      lock = JSON.parse(readFileSync(lockfile, "utf8")) as HiddenLockfile;
    } catch {
      return undefined; // npm rewrites it on its next install; the source is unknown until then
    }
    const resolved = lock.packages?.[path.relative(tree, root).split(path.sep).join("/")]?.resolved;
    if (typeof resolved !== "string" || !resolved.startsWith("file:") || !LOCAL.test(resolved.slice(5))) return undefined;
    return path.resolve(tree, resolved.slice(5));
  }
  return undefined;
}

/** A `file:` dependency on `target`, relative to the project as `npm install <path>` writes it: the two can move together. */
function fileSpec(target: string, dir: string): string {
  return `file:${path.relative(dir, target).split(path.sep).join("/")}`;
}

export interface DependencyOptions {
  /** `--package`: a version or range, or a tarball's (or folder's) path. */
  option: string | undefined;
  /** Where relative paths in `option` start. */
  cwd: string;
  /** The project's folder. */
  dir: string;
  /** The root of the edgequeue package this CLI runs from. */
  root: string;
  /** That package's version. */
  version: string;
}

/**
 * dependencySpec: what the project's package.json says for edgequeue. `--package` wins; otherwise as the running
 * CLI was installed: from a tarball (`npx ./edgequeue-<version>.tgz init …`) the same tarball, so `npm install`
 * works before the package is on any registry; from a registry `^<version>`, so `npm update` upgrades.
 */
export function dependencySpec(o: DependencyOptions): string {
  if (o.option !== undefined) {
    if (o.option.trim() === "") throw new UsageError("--package is empty: give a version, or a packed tarball's path");
    if (!LOCAL.test(o.option)) return o.option;
    const target = path.resolve(o.cwd, o.option);
    if (!existsSync(target)) throw new UsageError(`--package ${o.option}: no such file`);
    return fileSpec(target, o.dir);
  }
  const source = installedFrom(o.root);
  if (source === undefined) return `^${o.version}`;
  if (!existsSync(source)) throw new UsageError(`this edgequeue was installed from ${source}, which is gone: pass --package with a packed tarball's path, or a version`);
  return fileSpec(source, o.dir);
}

export interface InitResult {
  dir: string;
  name: string;
  /** What package.json's dependency on edgequeue says (dependencySpec). */
  edgequeue: string;
  files: string[];
}

export function init(target: string, options: { package?: string; cwd: string }): InitResult {
  const dir = path.resolve(options.cwd, target);
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new UsageError(`${target} exists and is not a folder`);
    const there = readdirSync(dir);
    if (there.length > 0) throw new UsageError(`${target} is not empty (${there.slice(0, 3).join(", ")}${there.length > 3 ? ", …" : ""}); init writes a new project into an empty or new folder`);
  }
  const name = path.basename(dir).toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || "edgequeue-app";
  const root = packageRoot();
  const spec = dependencySpec({ option: options.package, cwd: options.cwd, dir, root, version: repo.version });
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(root, "templates", "init"), dir, { recursive: true });
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = path.join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const to = RENAMED[f] ? path.join(d, RENAMED[f]) : p;
        if (to !== p) renameSync(p, to);
        writeFileSync(to, readFileSync(to, "utf8").replaceAll("{{name}}", name));
        files.push(path.relative(dir, to));
      }
    }
  };
  walk(dir);
  const dev = repo.devDependencies as Record<string, string>;
  const pkg = {
    name,
    private: true,
    type: "module",
    scripts: {
      // The production compatibility date is in wrangler.jsonc; the local runtime takes the newest it knows.
      dev: `wrangler dev --compatibility-date ${DEV_COMPATIBILITY_DATE}`,
      // A Worker with a config it refuses still deploys (it answers 503 misconfigured): check first.
      deploy: "edgequeue check && wrangler deploy",
      test: "vitest run",
      check: "tsc --noEmit && edgequeue check",
    },
    dependencies: { edgequeue: spec },
    devDependencies: {
      "@cloudflare/workers-types": dev["@cloudflare/workers-types"],
      typescript: dev.typescript,
      vitest: dev.vitest,
      wrangler: dev.wrangler,
    },
  };
  writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  files.push("package.json");
  return { dir, name, edgequeue: spec, files: files.sort() };
}
