#!/usr/bin/env node
// `npm run check`: no import cycles between the folders of src/ (issue 23). Each folder directly under
// src/ is one node (its subfolders included), and so is each file directly in src/ (src/clock.ts).
//
// An edge is an import that stays in the emitted JavaScript: `import`, `export … from`, `import()`.
// `import type` and `export type` are erased, so they are not edges — the Env interface (src/env.ts)
// names every Durable Object class and each class names Env, a cycle of types only, which is how a
// Worker's bindings are typed. `import { type X }` IS an edge: under verbatimModuleSyntax (tsconfig.json)
// it is emitted as `import {} from …`, which still loads the module.
//
// Imports are read with the TypeScript compiler's parser, so comments and strings are not imports.
// A cycle is reported as its strongly connected component: its folders, and for every import edge
// between two of them one import that makes it (file:line → specifier), with how many more there are.
//
// Then the boundaries (BOUNDARIES below): the coordinator and the schedule object reach src/scope/ only
// through src/scope/api.ts, type imports included.
//
// Last, the house inside src/scope/ (docs/design.md "The scope object: a core and its capabilities"), type
// imports included: its folders and top-level files form no cycle; the core (scope/jobs/) imports nothing else of
// scope/; the workflow capability imports only the core; every other capability folder imports only the core and
// workflow/; and no folder imports the shell's top-level files.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const ROOT = process.cwd();
const SRC = path.join(ROOT, "src");
const EXTENSIONS = [".ts", ".tsx", ".mts", ".js", ".mjs", ".json"];

/** The package's own specifiers (src/index.ts imports "edgequeue/server"): their "edgequeue-source" files. */
const selfExports = (() => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const out = new Map();
  for (const [key, entry] of Object.entries(pkg.exports ?? {})) {
    let source = typeof entry === "object" && entry !== null ? entry["edgequeue-source"] : undefined;
    if (source && typeof source === "object") source = source.workerd ?? source.default;
    if (typeof source === "string") out.set(pkg.name + key.slice(1), path.join(ROOT, source));
  }
  return out;
})();

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return filesUnder(p);
    return /\.(m?ts|tsx|m?js)$/.test(name) && !name.endsWith(".d.ts") ? [p] : [];
  });
}

/** resolve: the file a specifier names, or null for a package (outside this check). */
function resolve(from, spec) {
  if (selfExports.has(spec)) return selfExports.get(spec);
  if (!spec.startsWith(".")) return null;
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(m?js)$/, ""); // "./x.js" in TypeScript source names ./x.ts
  const candidates = [base, ...EXTENSIONS.map((e) => stem + e), ...EXTENSIONS.map((e) => path.join(base, "index" + e))];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? null;
}

/** node: the folder under src/ a file belongs to, or the file itself when it sits directly in src/. */
function node(file) {
  const rel = path.relative(SRC, file);
  if (rel.startsWith("..")) return null;
  const parts = rel.split(path.sep);
  return parts.length === 1 ? parts[0] : parts[0] + "/";
}

/** runtimeImports: the specifiers a file loads at run time (with `types`, type-only ones too), each with its line. */
function runtimeImports(file, text, types = false) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out = [];
  const add = (literal) => out.push({ spec: literal.text, line: sf.getLineAndCharacterOfPosition(literal.getStart(sf)).line + 1 });
  const walk = (n) => {
    if (ts.isImportDeclaration(n) && (types || !n.importClause?.isTypeOnly)) add(n.moduleSpecifier);
    else if (ts.isExportDeclaration(n) && n.moduleSpecifier && (types || !n.isTypeOnly)) add(n.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(n) && !n.isTypeOnly && ts.isExternalModuleReference(n.moduleReference)) add(n.moduleReference.expression);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteralLike(n.arguments[0])) add(n.arguments[0]);
    ts.forEachChild(n, walk);
  };
  walk(sf);
  return out;
}

// edges: from node → to node → the imports that make the edge.
const edges = new Map();
for (const file of filesUnder(SRC)) {
  const from = node(file);
  for (const { spec, line } of runtimeImports(file, readFileSync(file, "utf8"))) {
    const target = resolve(file, spec);
    const to = target && node(target);
    if (!to || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const out = edges.get(from);
    if (!out.has(to)) out.set(to, []);
    out.get(to).push(`${path.relative(ROOT, file)}:${line} imports "${spec}"`);
  }
}

// Tarjan's strongly connected components: every edge inside a component of two or more nodes lies on a cycle.
const nodes = [...new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])])].sort();
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let counter = 0;
function visit(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of [...(edges.get(v)?.keys() ?? [])].sort()) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const c = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1) components.push(c.sort());
  }
}
for (const v of nodes) if (!index.has(v)) visit(v);

if (components.length > 0) {
  const lines = [`Import cycles between folders of src/ (${components.length}); each must be broken:`];
  for (const c of components) {
    lines.push("", `  cycle: ${c.map((n) => `src/${n}`).join(" ↔ ")}`);
    const inside = new Set(c);
    for (const from of c) {
      for (const [to, imports] of [...(edges.get(from) ?? new Map())].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (!inside.has(to)) continue;
        const more = imports.length > 1 ? ` (and ${imports.length - 1} more)` : "";
        lines.push(`    src/${from} → src/${to}: ${imports[0]}${more}`);
      }
    }
  }
  console.error(lines.join("\n"));
  process.exit(1);
}
console.log(`no import cycles between the ${nodes.length} folders and top-level files of src/`);

// Boundaries: a folder that others reach through one module only. Type imports count too: what a folder
// names of another's inside is as much a dependency as what it calls.
const BOUNDARIES = [{ folder: "scope/", only: "src/scope/api.ts", from: ["coordinator/", "schedule/"], why: "what a scope object offers over RPC" }];
const crossings = [];
for (const file of filesUnder(SRC)) {
  for (const b of BOUNDARIES) {
    if (!b.from.includes(node(file))) continue;
    for (const { spec, line } of runtimeImports(file, readFileSync(file, "utf8"), true)) {
      const target = resolve(file, spec);
      if (target && node(target) === b.folder && path.relative(ROOT, target) !== b.only) {
        crossings.push(`  ${path.relative(ROOT, file)}:${line} imports "${spec}": import it from ${b.only} (${b.why})`);
      }
    }
  }
}
if (crossings.length > 0) {
  console.error(["Imports past a folder's boundary:", ...crossings].join("\n"));
  process.exit(1);
}
console.log(`${BOUNDARIES.map((b) => `src/${b.folder}`).join(", ")} reached only through ${BOUNDARIES.map((b) => b.only).join(", ")}`);

// Inside src/scope/: each subfolder is one node, each top-level file another.
const SCOPE = path.join(SRC, "scope");
const scopeNode = (file) => {
  const rel = path.relative(SCOPE, file);
  if (rel.startsWith("..")) return null;
  const parts = rel.split(path.sep);
  return parts.length === 1 ? parts[0] : parts[0] + "/";
};
const CORE = "jobs/";
const MAY_IMPORT = (from) => (from === CORE ? [] : from === "workflow/" ? [CORE] : [CORE, "workflow/"]);
const scopeEdges = new Map();
const scopeCrossings = [];
for (const file of filesUnder(SCOPE)) {
  const from = scopeNode(file);
  for (const { spec, line } of runtimeImports(file, readFileSync(file, "utf8"), true)) {
    const target = resolve(file, spec);
    const to = target && scopeNode(target);
    if (!to || to === from) continue;
    if (!scopeEdges.has(from)) scopeEdges.set(from, new Set());
    scopeEdges.get(from).add(to);
    if (from.endsWith("/") && !MAY_IMPORT(from).includes(to)) {
      scopeCrossings.push(`  ${path.relative(ROOT, file)}:${line} imports "${spec}": src/scope/${from} ${MAY_IMPORT(from).length === 0 ? "imports nothing else of src/scope/" : `may import only ${MAY_IMPORT(from).map((n) => `src/scope/${n}`).join(" and ")}`}`);
    }
  }
}
if (scopeCrossings.length > 0) {
  console.error(["Imports across the capabilities of src/scope/:", ...scopeCrossings].join("\n"));
  process.exit(1);
}
// A cycle among the shell's top-level files (folders cannot be on one: they only import downward).
const seen = new Map();
const onPath = (n, trail) => {
  if (trail.includes(n)) return [...trail.slice(trail.indexOf(n)), n];
  if (seen.get(n)) return null;
  seen.set(n, true);
  for (const m of scopeEdges.get(n) ?? []) {
    const c = onPath(m, [...trail, n]);
    if (c) return c;
  }
  return null;
};
for (const n of scopeEdges.keys()) {
  const c = onPath(n, []);
  if (c) {
    console.error(`An import cycle inside src/scope/: ${c.map((x) => `src/scope/${x}`).join(" → ")}`);
    process.exit(1);
  }
}
console.log(`src/scope/: no cycle among its ${new Set([...scopeEdges.keys(), ...[...scopeEdges.values()].flatMap((s) => [...s])]).size} folders and files; jobs/ stands alone, workflow/ on jobs/, the other capabilities on both`);

