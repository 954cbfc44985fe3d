#!/usr/bin/env node
// `npm start`: run the queue locally on workerd (wrangler dev) — the coordinator and the example
// handler Worker together — with state persisted under .wrangler/.
// Creates .dev.vars (the local QUEUE_TOKEN) from .dev.vars.example on first run.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
process.chdir(root);

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("Created .dev.vars from .dev.vars.example (QUEUE_TOKEN=dev-token).");
}

// wrangler's own entry under this Node: no .bin shim, so no shell (Windows refuses to spawn a .cmd without one).
const child = spawn(process.execPath, ["node_modules/wrangler/bin/wrangler.js", "dev", "-c", "wrangler.toml", "-c", "examples/handler/wrangler.toml", ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
