/**
 * What `edgequeue init` writes for the project's dependency on edgequeue (src/cli/init.ts dependencySpec): as the
 * running CLI was installed — a tarball's `file:` path, relative to the project, when npm installed it from one
 * (npx included: npm records the source in the tree's hidden lockfile), `^<version>` from a registry or a checkout —
 * unless `--package` says otherwise; and the refusals, each naming what is wrong. The e2e project
 * (test/e2e/init-project.test.ts) runs the real `npx <tarball> init`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { dependencySpec, init, installedFrom, packageRoot } from "../../src/cli/init";
import { UsageError } from "../../src/cli/output";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A folder laid out as npm leaves one: `tree/node_modules/<at>` is the installed package, and
 * `tree/node_modules/.package-lock.json` records `resolved` for it (undefined: the entry has none, as with
 * omit-lockfile-registry-resolved); `pkgs/edgequeue-1.2.3.tgz` is a tarball beside the tree.
 */
function installed(resolved: string | undefined, at = "edgequeue", o: { tarball?: boolean; lockfile?: string } = {}) {
  const base = mkdtempSync(path.join(tmpdir(), "edgequeue-init-spec-"));
  dirs.push(base);
  const tree = path.join(base, "tree");
  const root = path.join(tree, "node_modules", at);
  mkdirSync(root, { recursive: true });
  mkdirSync(path.join(base, "pkgs"));
  if (o.tarball !== false) writeFileSync(path.join(base, "pkgs", "edgequeue-1.2.3.tgz"), "");
  const entry = resolved === undefined ? { version: "1.2.3" } : { version: "1.2.3", resolved };
  writeFileSync(path.join(tree, "node_modules", ".package-lock.json"), o.lockfile ?? JSON.stringify({ name: "tree", lockfileVersion: 3, packages: { [`node_modules/${at}`]: entry } }));
  return { base, root, project: path.join(base, "projects", "my-queue") };
}

const spec = (o: { option?: string; cwd?: string; dir: string; root: string }) => dependencySpec({ option: o.option, cwd: o.cwd ?? path.dirname(o.dir), dir: o.dir, root: o.root, version: "1.2.3" });

describe("the dependency init writes on edgequeue", () => {
  it("from a tarball npm installed (npx <tarball>, npm install <tarball>): that tarball, relative to the project", () => {
    const { base, root, project } = installed("file:../pkgs/edgequeue-1.2.3.tgz");
    expect(installedFrom(root)).toBe(path.join(base, "pkgs", "edgequeue-1.2.3.tgz"));
    expect(spec({ dir: project, root })).toBe("file:../../pkgs/edgequeue-1.2.3.tgz");
  });

  it("from a folder npm copied in (install-links): that folder", () => {
    const { root, project } = installed("file:../pkgs");
    expect(spec({ dir: project, root })).toBe("file:../../pkgs");
  });

  it("installed as another package's dependency: the lockfile's entry by its nested path", () => {
    const { root, project } = installed("file:../pkgs/edgequeue-1.2.3.tgz", "tools/node_modules/edgequeue");
    expect(spec({ dir: project, root })).toBe("file:../../pkgs/edgequeue-1.2.3.tgz");
  });

  it("from a registry, a checkout, or a lockfile that says nothing usable: ^<version>", () => {
    for (const resolved of ["https://registry.npmjs.org/edgequeue/-/edgequeue-1.2.3.tgz", undefined, "git+ssh://git@example.com/edgequeue.git#abc"]) {
      const { root, project } = installed(resolved);
      expect(installedFrom(root), String(resolved)).toBeUndefined();
      expect(spec({ dir: project, root }), String(resolved)).toBe("^1.2.3");
    }
    const unreadable = installed(undefined, "edgequeue", { lockfile: "{ not json" });
    expect(spec({ dir: unreadable.project, root: unreadable.root })).toBe("^1.2.3");
    // This repository is a checkout: its sources run init with the registry's range.
    expect(packageRoot()).toBe(path.resolve(ROOT));
    expect(installedFrom(ROOT)).toBeUndefined();
  });

  it("a tarball that is gone since the install is refused, naming it and the way out", () => {
    const { base, root, project } = installed("file:../pkgs/edgequeue-1.2.3.tgz", "edgequeue", { tarball: false });
    expect(() => spec({ dir: project, root })).toThrow(UsageError);
    expect(() => spec({ dir: project, root })).toThrow(`this edgequeue was installed from ${path.join(base, "pkgs", "edgequeue-1.2.3.tgz")}, which is gone: pass --package with a packed tarball's path, or a version`);
  });

  it("--package wins: a version or range as given, a path as file: relative to the project, refused when missing or empty", () => {
    const { base, root, project } = installed("file:../pkgs/edgequeue-1.2.3.tgz");
    expect(spec({ option: "^2.0.0", dir: project, root })).toBe("^2.0.0");
    expect(spec({ option: "latest", dir: project, root })).toBe("latest");
    expect(spec({ option: "../pkgs/edgequeue-1.2.3.tgz", cwd: path.join(base, "projects"), dir: project, root })).toBe("file:../../pkgs/edgequeue-1.2.3.tgz");
    expect(spec({ option: path.join(base, "pkgs"), dir: project, root })).toBe("file:../../pkgs");
    expect(() => spec({ option: "./nope.tgz", dir: project, root })).toThrow("--package ./nope.tgz: no such file");
    expect(() => spec({ option: " ", dir: project, root })).toThrow("--package is empty: give a version, or a packed tarball's path");
  });

  it("init writes it into package.json and says it; npm run deploy checks the config first", () => {
    const { base } = installed(undefined);
    writeFileSync(path.join(base, "pkgs", "edgequeue-1.2.3.tgz"), "");
    const r = init("my-queue", { package: "./pkgs/edgequeue-1.2.3.tgz", cwd: base });
    expect(r.edgequeue).toBe("file:../pkgs/edgequeue-1.2.3.tgz");
    const pkg = JSON.parse(readFileSync(path.join(r.dir, "package.json"), "utf8")) as { dependencies: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.dependencies.edgequeue).toBe("file:../pkgs/edgequeue-1.2.3.tgz");
    // docs/deploy.md: a deploy checks the config first, since a Worker with a config it refuses still deploys.
    expect(pkg.scripts.deploy).toBe("edgequeue check && wrangler deploy");
  });
});

