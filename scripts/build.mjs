#!/usr/bin/env node
// `npm run build`, and `prepack` (so `npm pack` and `npm publish` at the root build first): the package users install —
// built JavaScript and bundled .d.ts under dist/, which package.json's exports point at. In this repo the tests,
// examples and `wrangler dev` use the TypeScript sources instead (the "edgequeue-source" export condition; README
// "Development"). Entry points (docs/deploy.md "Install"):
//   edgequeue           clients and types (Workers, Node, browsers)
//   edgequeue/handler   defineHandlers for a handler Worker (a plain-class build outside workerd)
//   edgequeue/worker    the pull worker for Node, and the errors its handlers throw
//   edgequeue/testing   the step test kit and the test doubles
//   edgequeue/outbox    the transactional outbox for a Durable Object of the user's own
//   edgequeue/workflows the Cloudflare Workflows API on the queue (WorkflowEntrypoint, step, a binding-shaped client)
//   edgequeue/queues    Cloudflare Queues in (a consumer that makes messages jobs) and out (a send/sendBatch shim)
//   edgequeue/server    the queue itself: createQueue, defineConfig, the Durable Object classes
//   bin edgequeue       init, check and the operator commands (Node)
import { chmodSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = path.join(root, "dist");
rmSync(dist, { recursive: true, force: true });

// Runtime dependencies stay imports (package.json dependencies); the Workers runtime provides cloudflare:workers.
const external = ["cloudflare:workers", "zod", "hono", /^hono\//, "drizzle-orm", /^drizzle-orm\//, "commander"];
const common = { outDir: dist, format: ["esm"], target: "es2022", tsconfig: path.join(root, "tsconfig.json"), external, silent: true };

const library = {
  index: "src/sdk.ts",
  handler: "src/handler/index.ts",
  "handler-node": "src/handler/node.ts",
  worker: "src/pull-worker/index.ts",
  testing: "src/testing/index.ts",
  outbox: "src/outbox/index.ts",
  queues: "src/queues/index.ts",
  workflows: "src/workflows/index.ts",
  server: "src/server/index.ts",
};
await build({
  ...common,
  entry: library,
  platform: "neutral",
  splitting: true,
  // The queue's storage migrations are SQL files, inlined as text (wrangler's Text rule does this in the repo).
  loader: { ".sql": "text" },
  // The repo's own condition must not leak into the build: the .d.ts resolve edgequeue's modules by relative path.
  dts: { entry: library, compilerOptions: { customConditions: [] } },
});

await build({
  ...common,
  entry: { cli: "src/cli/index.ts" },
  platform: "node",
  banner: { js: "#!/usr/bin/env node" },
  loader: { ".sql": "text" },
});
chmodSync(path.join(dist, "cli.js"), 0o755);
// On stderr: `npm pack --json` prints its JSON on stdout, after this script.
console.error(`built ${path.relative(root, dist)}/`);
