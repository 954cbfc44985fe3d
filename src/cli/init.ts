/**
 * `edgequeue init <dir> [--package <spec>]`: from an empty folder to a
 * running, deployable queue (README "Start"). It writes the
 * project from the package's templates/init: wrangler.jsonc, src/index.ts,
 * edgequeue.config.ts, handlers (one with durable steps), their test, .dev.vars
 * with a dev token, .gitignore and a short README — and a package.json that
 * depends on edgequeue (`--package` takes a tarball path or a version, so it
 * works offline from a packed tarball) and on the tool versions this release
 * was tested with.
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

function templates(): string {
  // dist/cli.js in the package, src/cli/init.ts in the repo: templates/ is at the package root either way.
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const up of ["..", "../.."]) {
    const dir = path.resolve(here, up, "templates", "init");
    if (existsSync(dir)) return dir;
  }
  throw new Error(`edgequeue's templates/init is missing beside ${here}`);
}

/** packageSpec: what the project's dependency on edgequeue says: a tarball path (file:), a version or range, or this CLI's own version. */
export function packageSpec(spec: string | undefined, cwd: string): string {
  if (!spec) return `^${repo.version}`;
  if (/\.tgz$/.test(spec) || spec.startsWith(".") || spec.startsWith("/")) {
    const abs = path.resolve(cwd, spec);
    if (!existsSync(abs)) throw new UsageError(`--package ${spec}: no such file`);
    return `file:${abs}`;
  }
  return spec;
}

export interface InitResult {
  dir: string;
  name: string;
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
  const spec = packageSpec(options.package, options.cwd);
  mkdirSync(dir, { recursive: true });
  cpSync(templates(), dir, { recursive: true });
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
      deploy: "wrangler deploy",
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
  return { dir, name, files: files.sort() };
}
