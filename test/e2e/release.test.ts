/**
 * `npm run release` (scripts/release.mjs), on a copy of this work tree committed to a git repository of its own
 * outside the repo — never on this repo's files: the refusals (a bad argument, a dirty tree, nothing in
 * "Unreleased") change nothing, and a release bumps package.json and the lockfile, dates the CHANGELOG's entries
 * under the new version, and packs a tarball whose built CLI says that version.
 */
import { execFileSync, type ExecFileSyncOptions } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let copy: string;
const run = (cmd: string, args: string[], o: ExecFileSyncOptions = {}) => execFileSync(cmd, args, { cwd: copy, encoding: "utf8", stdio: "pipe", ...o }) as string;
const git = (...args: string[]) => run("git", ["-c", "user.name=release test", "-c", "user.email=release@test.invalid", ...args]);
const read = (f: string) => readFileSync(path.join(copy, f), "utf8");

/** release: `npm run release -- <args>` in the copy; its exit status and what it said. */
function release(...args: string[]): { status: number; out: string; err: string } {
  try {
    const out = run("npm", ["run", "-s", "release", "--", ...args]);
    return { status: 0, out, err: "" };
  } catch (e) {
    const x = e as { status: number; stdout: string; stderr: string };
    return { status: x.status, out: x.stdout, err: x.stderr };
  }
}

/** The "## Unreleased" entries of a CHANGELOG, up to the next heading. */
const unreleased = (text: string) => /^## Unreleased\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)![1]!.trim();

beforeAll(() => {
  copy = mkdtempSync(path.join(tmpdir(), "edgequeue-release-"));
  // The work tree as it stands (tracked and new files, not ignored ones), committed: a clean tree to release from.
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" }).split("\0");
  // Files only: a path deleted but not yet committed is gone, and node_modules is linked below, whatever git says.
  for (const f of files.filter((f) => f && existsSync(path.join(ROOT, f)) && statSync(path.join(ROOT, f)).isFile() && f.split("/")[0] !== "node_modules")) {
    mkdirSync(path.dirname(path.join(copy, f)), { recursive: true });
    copyFileSync(path.join(ROOT, f), path.join(copy, f));
  }
  symlinkSync(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "the work tree");
}, 120_000);

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe.sequential("npm run release", () => {
  const current = () => (JSON.parse(read("package.json")) as { version: string }).version;

  it("refuses a missing or bad argument, or one not after the current version, and changes nothing", () => {
    const now = current();
    const [major, minor, patch] = now.split(".").map(Number) as [number, number, number];
    const earlier = patch > 0 ? `${major}.${minor}.${patch - 1}` : minor > 0 ? `${major}.${minor - 1}.9` : `${major - 1}.9.9`;
    const refusals: [string[], RegExp][] = [
      [[], /give exactly one argument \(got 0\)\nusage: npm run release -- <patch\|minor\|major\|x\.y\.z>/],
      [["minor", "patch"], /give exactly one argument \(got 2\)/],
      [["huge"], /"huge" is not patch, minor, major or x\.y\.z/],
      [["1.2"], /"1\.2" is not patch, minor, major or x\.y\.z/],
      [["v1.2.3"], /"v1\.2\.3" is not patch, minor, major or x\.y\.z/],
      [[now], new RegExp(`${now.replaceAll(".", "\\.")} is not after the current ${now.replaceAll(".", "\\.")}`)],
      [[earlier], new RegExp(`${earlier.replaceAll(".", "\\.")} is not after the current`)],
    ];
    for (const [args, said] of refusals) {
      const r = release(...args);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.err, args.join(" ")).toMatch(said);
    }
    expect(git("status", "--porcelain")).toBe("");
  });

  it("refuses a dirty tree, naming what changed", () => {
    const readme = read("README.md");
    writeFileSync(path.join(copy, "docs/draft.md"), "# a draft\n");
    writeFileSync(path.join(copy, "README.md"), `${readme}\nmore\n`);
    try {
      const r = release("patch");
      expect(r.status).toBe(1);
      expect(r.err).toMatch(/the work tree has changes; commit or stash them first/);
      expect(r.err).toContain(" M README.md");
      expect(r.err).toContain("?? docs/draft.md");
      expect(existsSync(path.join(copy, `edgequeue-${current()}.tgz`))).toBe(false);
    } finally {
      writeFileSync(path.join(copy, "README.md"), readme);
      rmSync(path.join(copy, "docs/draft.md"));
    }
    expect(git("status", "--porcelain")).toBe("");
  });

  it("a minor release: the version bumped, the CHANGELOG dated, the package packed and built with that version", () => {
    const before = current();
    const [major, minor] = before.split(".").map(Number) as [number, number];
    const version = `${major}.${minor + 1}.0`;
    const entries = unreleased(read("CHANGELOG.md"));
    expect(entries, "the copy's CHANGELOG has entries to release").not.toBe("");
    const day = new Date().toISOString().slice(0, 10);

    const r = release("minor");
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain(`edgequeue ${version} (was ${before}): edgequeue-${version}.tgz`);

    expect(current()).toBe(version);
    const lock = JSON.parse(read("package-lock.json")) as { version: string; packages: Record<string, { version: string }> };
    expect([lock.version, lock.packages[""]!.version]).toEqual([version, version]);
    const changelog = read("CHANGELOG.md");
    expect(unreleased(changelog)).toBe("");
    const dated = new RegExp(`^## Unreleased\\n\\n## ${version.replaceAll(".", "\\.")} — (\\d{4}-\\d{2}-\\d{2})\\n\\n`, "m").exec(changelog);
    expect(dated, changelog.slice(0, 600)).not.toBeNull();
    expect([day, new Date().toISOString().slice(0, 10)]).toContain(dated![1]);
    expect(changelog.slice(dated!.index + dated![0].length).startsWith(entries)).toBe(true);
    expect(git("status", "--porcelain").split("\n").filter(Boolean).sort()).toEqual([" M CHANGELOG.md", " M package-lock.json", " M package.json"]);

    // The tarball, unpacked inside the copy so its dist/ finds the dependencies in the copy's node_modules.
    const unpacked = path.join(copy, ".package");
    mkdirSync(unpacked);
    run("tar", ["-xzf", `edgequeue-${version}.tgz`, "-C", unpacked]);
    expect(JSON.parse(readFileSync(path.join(unpacked, "package/package.json"), "utf8")).version).toBe(version);
    expect(run(process.execPath, [path.join(unpacked, "package/dist/cli.js"), "--version"])).toBe(`${version}\n`);
    // /v1/health's version is inlined in the Worker's code: nothing reads package.json at run time.
    const server = readFileSync(path.join(unpacked, "package/dist/server.js"), "utf8");
    expect(server).toContain(`"${version}"`);
    expect(server).not.toMatch(/(from\s*|import\(\s*|require\(\s*)["'][^"']*package\.json["']/);
  });

  it("refuses a release with nothing under Unreleased", () => {
    git("commit", "-qam", "release");
    const r = release("patch");
    expect(r.status).toBe(1);
    expect(r.err).toMatch(/CHANGELOG\.md's "Unreleased" is empty: say what this release changes first/);
    expect(git("status", "--porcelain")).toBe("");
  });
});
