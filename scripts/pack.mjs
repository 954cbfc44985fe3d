#!/usr/bin/env node
// `npm run pack`: build the `edgequeue` package users install — built JavaScript and bundled .d.ts
// under .package/ with a package.json of its own — and `npm pack` it into edgequeue-<version>.tgz
// here (or in the folder given with --out). This repo's root package.json is the development
// project (private; its exports point at the TypeScript sources for the tests and examples); the
// package is what leaves the repo. Entry points (README "Install"):
//   edgequeue           clients and types (Workers, Node, browsers)
//   edgequeue/handler   defineHandlers for a handler Worker (a plain-class build outside workerd)
//   edgequeue/worker    the pull worker for Node
//   edgequeue/testing   the step test kit and the test doubles
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";

const root = fileURLToPath(new URL("..", import.meta.url));
const outArg = process.argv.indexOf("--out");
const outDir = outArg > 0 ? path.resolve(process.argv[outArg + 1]) : root;
const pkgDir = path.join(root, ".package");
const dev = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));

rmSync(pkgDir, { recursive: true, force: true });
mkdirSync(pkgDir, { recursive: true });

const entry = {
  index: "src/sdk.ts",
  handler: "src/handler/index.ts",
  "handler-node": "src/handler/node.ts",
  worker: "src/worker/index.ts",
  testing: "src/testing/index.ts",
  outbox: "src/outbox/index.ts",
};
await build({
  entry,
  outDir: path.join(pkgDir, "dist"),
  format: ["esm"],
  target: "es2022",
  platform: "neutral",
  splitting: true,
  dts: { entry, compilerOptions: { customConditions: [] } },
  // The Workers runtime provides cloudflare:workers; zod is a dependency (the .d.ts name its types).
  external: ["cloudflare:workers", "zod"],
  tsconfig: path.join(root, "tsconfig.json"),
  silent: true,
});

const types = (name) => `./dist/${name}.d.ts`;
const pkg = {
  name: "edgequeue",
  version: dev.version,
  description: dev.description,
  license: dev.license,
  type: "module",
  // What the package itself needs: the clients and the pull worker run on Node 20 (the dev toolchain needs more).
  engines: { node: ">=20.11" },
  exports: {
    ".": { types: types("index"), default: "./dist/index.js" },
    // In workerd (wrangler bundles with the workerd and worker conditions) defineHandlers extends WorkerEntrypoint;
    // anywhere else it makes a plain class, so a handler module loads in Node for edgequeue/testing. The types are
    // the plain build's, so a project needs no Workers types to compile a handler module.
    "./handler": {
      workerd: { types: types("handler"), default: "./dist/handler.js" },
      worker: { types: types("handler"), default: "./dist/handler.js" },
      default: { types: types("handler-node"), default: "./dist/handler-node.js" },
    },
    "./worker": { types: types("worker"), default: "./dist/worker.js" },
    "./testing": { types: types("testing"), default: "./dist/testing.js" },
    "./outbox": { types: types("outbox"), default: "./dist/outbox.js" },
    "./package.json": "./package.json",
  },
  files: ["dist", "README.md", "LICENSE"],
  dependencies: { zod: dev.dependencies.zod },
  peerDependencies: { "@cloudflare/workers-types": "*" },
  peerDependenciesMeta: { "@cloudflare/workers-types": { optional: true } },
  sideEffects: false,
};
writeFileSync(path.join(pkgDir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
copyFileSync(path.join(root, "LICENSE"), path.join(pkgDir, "LICENSE"));
copyFileSync(path.join(root, "README.md"), path.join(pkgDir, "README.md"));

mkdirSync(outDir, { recursive: true });
const out = execFileSync("npm", ["pack", pkgDir, "--pack-destination", outDir, "--json"], { encoding: "utf8" });
const [{ filename, size, entryCount }] = JSON.parse(out);
const tarball = path.join(outDir, filename);
console.log(JSON.stringify({ tarball, size, files: entryCount }));
