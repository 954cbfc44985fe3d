#!/usr/bin/env node
// `npm run release -- <patch|minor|major|x.y.z>`: a release of the package, from a clean work tree. It bumps the
// version in package.json and package-lock.json (`npm version`), moves CHANGELOG.md's "Unreleased" entries under a
// dated heading for that version (leaving an empty "Unreleased" on top), and runs `npm pack`, whose prepack builds
// dist/ — the build inlines the version (src/version.ts), so /v1/health and `edgequeue --version` say the new one.
// It commits, tags and publishes nothing: it prints those steps. Refused, it changes nothing; a failed pack puts
// back the three files it edited.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const USAGE = "usage: npm run release -- <patch|minor|major|x.y.z>";
const UNRELEASED = /^## Unreleased[ \t]*\n/m;

/** refuse: say why on stderr and stop, before anything is written. */
function refuse(message) {
  console.error(`release: ${message}`);
  process.exit(1);
}

const sh = (cmd, args, o = {}) => execFileSync(cmd, args, { cwd: root, encoding: "utf8", ...o });

/** next: the version `bump` names, after `current` (x.y.z, no pre-release part: this script never makes one). */
function next(current, bump) {
  const now = /^(\d+)\.(\d+)\.(\d+)$/.exec(current)?.slice(1).map(Number);
  if (!now) refuse(`package.json's version "${current}" is not x.y.z; set the release's version by hand`);
  const [major, minor, patch] = now;
  if (bump === "major") return `${major + 1}.0.0`;
  if (bump === "minor") return `${major}.${minor + 1}.0`;
  if (bump === "patch") return `${major}.${minor}.${patch + 1}`;
  const wanted = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(bump)?.slice(1).map(Number);
  if (!wanted) refuse(`the version to release: "${bump}" is not patch, minor, major or x.y.z\n${USAGE}`);
  const first = wanted.findIndex((n, i) => n !== now[i]);
  if (first === -1 || wanted[first] < now[first]) refuse(`the version to release: ${bump} is not after the current ${current}`);
  return bump;
}

/** changelog: CHANGELOG.md with the "Unreleased" entries under `## <version> — <date>`, and "Unreleased" empty. */
function changelog(text, version, date) {
  const heading = UNRELEASED.exec(text);
  if (!heading) refuse('CHANGELOG.md has no "## Unreleased" heading to release');
  const start = heading.index + heading[0].length;
  const length = text.slice(start).search(/^## /m);
  const end = length === -1 ? text.length : start + length;
  const entries = text.slice(start, end).trim();
  if (entries === "") refuse('CHANGELOG.md\'s "Unreleased" is empty: say what this release changes first');
  const older = text.slice(end);
  return `${text.slice(0, heading.index)}## Unreleased\n\n## ${version} — ${date}\n\n${entries}\n${older ? `\n${older}` : ""}`;
}

const args = process.argv.slice(2);
if (args.length !== 1) refuse(`give exactly one argument (got ${args.length})\n${USAGE}`);
const pkgPath = path.join(root, "package.json");
const current = JSON.parse(readFileSync(pkgPath, "utf8")).version;
const version = next(current, args[0]);

let dirty;
try {
  dirty = sh("git", ["status", "--porcelain"], { stdio: ["ignore", "pipe", "pipe"] });
} catch {
  refuse(`${root} is not a git work tree: a release is made from a clean checkout`);
}
if (dirty.trim() !== "") {
  refuse(`the work tree has changes; commit or stash them first, so the package holds only what is committed:\n${dirty.trimEnd()}`);
}

const files = ["package.json", "package-lock.json", "CHANGELOG.md"].map((f) => path.join(root, f));
const before = files.map((f) => readFileSync(f, "utf8"));
const date = new Date().toISOString().slice(0, 10);
const released = changelog(before[2], version, date);

try {
  // npm's own bump: package.json and the lockfile's two copies of the version, formatting kept. No commit or tag.
  sh("npm", ["version", version, "--no-git-tag-version"], { stdio: ["ignore", "ignore", "inherit"] });
  writeFileSync(files[2], released);
  // prepack (scripts/build.mjs) builds dist/ with the new version; the tarball is edgequeue-<version>.tgz here.
  const [packed] = JSON.parse(sh("npm", ["pack", "--json"], { stdio: ["ignore", "pipe", "inherit"] }));
  console.log(`edgequeue ${version} (was ${current}): ${packed.filename}, CHANGELOG.md "## ${version} — ${date}"
next: review the diff, then
  git commit -am "Release ${version}" && git tag v${version}
  npm publish ${packed.filename}     # once edgequeue is on the registry; until then, hand out the tarball`);
} catch (e) {
  files.forEach((f, i) => writeFileSync(f, before[i]));
  console.error(`release: ${e instanceof Error ? e.message : e}\nrelease: put package.json, package-lock.json and CHANGELOG.md back as they were`);
  process.exit(1);
}
