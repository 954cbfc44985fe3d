/**
 * The Durable Object bindings and migration tags the queue needs in the
 * Worker that runs it (docs/deploy.md "Add edgequeue to a Worker"), and the one
 * message that says what is missing — answered to every request instead of a
 * 500 with a stack, so a person sees exactly which lines to add.
 *
 * @module
 */
import { present } from "../config/load";

/** Binding → class, in the order the README and the template list them. The names are fixed: objects are found by them. */
export const QUEUE_OBJECTS = [
  { binding: "SCOPE", className: "ScopeDO" },
  { binding: "CATALOG", className: "CatalogDO" },
  { binding: "POOL", className: "PoolDO" },
  { binding: "SCHEDULE", className: "ScheduleDO" },
  { binding: "WAIT", className: "WaitDO" },
] as const;

/** The migration tags, as releases added the classes (CHANGELOG.md): a new class comes with a new tag. */
export const QUEUE_MIGRATIONS = [
  { tag: "v1", new_sqlite_classes: ["ScopeDO", "CatalogDO"] },
  { tag: "v2", new_sqlite_classes: ["PoolDO"] },
  { tag: "v3", new_sqlite_classes: ["ScheduleDO"] },
  { tag: "v4", new_sqlite_classes: ["WaitDO"] },
] as const;

/** The export name in-Worker handlers must have: the queue calls them through `ctx.exports.EdgeQueueHandlers`. */
export const LOCAL_HANDLERS = "EdgeQueueHandlers";

/** missingObjects: the queue's Durable Object bindings the env lacks, with the wrangler.jsonc lines that add them. */
export function missingObjects(env: object): string | null {
  const e = env as Record<string, unknown>;
  const missing = QUEUE_OBJECTS.filter((o) => !present(e[o.binding]));
  if (missing.length === 0) return null;
  const bindings = missing.map((o) => `      { "name": "${o.binding}", "class_name": "${o.className}" }`).join(",\n");
  const migrations = QUEUE_MIGRATIONS.map((m) => `    { "tag": "${m.tag}", "new_sqlite_classes": ${JSON.stringify(m.new_sqlite_classes)} }`).join(",\n");
  return [
    `edgequeue is not set up in this Worker: no Durable Object binding ${missing.map((o) => `${o.binding} (class ${o.className})`).join(", ")}.`,
    `Add to wrangler.jsonc (every binding and migration the queue needs; keep the ones you have):`,
    `  "durable_objects": {`,
    `    "bindings": [`,
    bindings,
    `    ]`,
    `  },`,
    `  "migrations": [`,
    migrations,
    `  ]`,
    `and export the classes from your Worker's main module: export const { ${QUEUE_OBJECTS.map((o) => o.className).join(", ")}, EdgeQueue } = queue;`,
  ].join("\n");
}

/** missingHandlers: in-Worker handlers were given, but ctx.exports has no loopback binding to them. */
export function missingHandlers(exports: Record<string, unknown> | undefined): string | null {
  if (exports === undefined) {
    return `edgequeue runs this Worker's handlers through ctx.exports, which this Worker does not have: set "compatibility_date" to 2025-11-17 or later, or add the "enable_ctx_exports" compatibility flag, in wrangler.jsonc.`;
  }
  // A loopback binding is a callable stub: typeof "function", where an env binding is an "object".
  if (present(exports[LOCAL_HANDLERS])) return null;
  return `edgequeue runs this Worker's handlers through ctx.exports.${LOCAL_HANDLERS}, which this Worker does not export: add ${LOCAL_HANDLERS} to the exports of its main module, e.g. export const { ${LOCAL_HANDLERS} } = queue;`;
}
