/**
 * The `edgequeue` command (docs/operating.md "The operator CLI"): `init` writes a
 * project, `check` validates a config offline, and the operator commands call
 * a running queue over HTTP with the package's own client. Built on
 * commander; exit codes 0 ok, 1 refused, 2 usage.
 *
 * @module
 */
import { tokensCommand } from "./tokens";
import { keysCommand } from "./keys";
import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Command, CommanderError } from "commander";
import { createHttpClient, type HttpQueueClient } from "../client/http-client";
import { VERSION } from "../version";
import { check } from "./check";
import { init } from "./init";
import { operatorCommands } from "./operator";
import { EXIT, explain, UsageError } from "./output";

export const DEFAULT_URL = "http://127.0.0.1:8787";

/** tokenFromDevVars: QUEUE_TOKEN in ./.dev.vars, so a local queue needs no flag. */
function tokenFromDevVars(cwd: string): string | undefined {
  try {
    return /^QUEUE_TOKEN\s*=\s*"?([^"\n]*)"?\s*$/m.exec(readFileSync(path.join(cwd, ".dev.vars"), "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

export interface CliEnv {
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  out(s: string): void;
  err(s: string): void;
  fetch?: typeof fetch;
}

/** run: the whole CLI, as a function (tests call it); resolves with the exit code. */
export async function run(cli: CliEnv): Promise<number> {
  const program = new Command("edgequeue")
    .description("edgequeue: start a project, check its config, operate a running queue")
    .version(VERSION)
    .option("--url <url>", `the queue's URL (EDGEQUEUE_URL; default ${DEFAULT_URL})`)
    .option("--token <token>", "the queue's token (EDGEQUEUE_TOKEN; default QUEUE_TOKEN from ./.dev.vars)")
    .option("--json", "print JSON for scripts")
    .exitOverride()
    .configureOutput({ writeOut: cli.out, writeErr: cli.err })
    .showSuggestionAfterError(true);

  let client: HttpQueueClient | undefined;
  operatorCommands(program, {
    out: cli.out,
    err: cli.err,
    json: () => program.opts().json === true,
    sleep: (ms) => sleep(ms),
    ...(cli.fetch ? { fetch: cli.fetch } : {}),
    client: () => {
      if (client) return client;
      const o = program.opts();
      const url = o.url ?? cli.env.EDGEQUEUE_URL ?? DEFAULT_URL;
      const token = o.token ?? cli.env.EDGEQUEUE_TOKEN ?? tokenFromDevVars(cli.cwd);
      if (!token) throw new UsageError("no token: pass --token, set EDGEQUEUE_TOKEN, or run where .dev.vars has QUEUE_TOKEN");
      client = createHttpClient(url, token, cli.fetch ? { fetch: (i, init) => cli.fetch!(i, init) } : {});
      return client;
    },
  });

  tokensCommand(program, cli.out);
  keysCommand(program, cli.out);

  program
    .command("init <dir>")
    .description("write a new project: a Worker running the queue and its handlers, a config, a test")
    .option("--package <spec>", "the edgequeue the project depends on: a version, or a packed tarball's path (works offline)")
    .action((dir: string, o: { package?: string }) => {
      const r = init(dir, { package: o.package, cwd: cli.cwd });
      const rel = path.relative(cli.cwd, r.dir) || ".";
      if (program.opts().json) cli.out(`${JSON.stringify(r, null, 2)}\n`);
      else cli.out(`Wrote ${r.name} in ${rel}:\n${r.files.map((f) => `  ${f}`).join("\n")}\n\nNext:\n  cd ${rel}\n  npm install\n  npm run dev\n`);
    });

  program
    .command("check [config]")
    .description("validate a config offline, as the Worker does at startup (default: edgequeue.config.ts, else wrangler.jsonc / wrangler.toml here)")
    .option("--wrangler <file>", "the wrangler config to check bindings against (default: the one beside the config)")
    .action(async (file: string | undefined, o: { wrangler?: string }) => {
      const r = await check(cli.cwd, file, o.wrangler);
      const c = r.config;
      const summary = { file: r.file, wrangler: r.wrangler, types: Object.keys(c.types).length, pools: Object.keys(c.pools).length, schedules: Object.keys(c.schedules).length, topics: Object.keys(c.topics).length, warnings: r.warnings };
      if (program.opts().json) cli.out(`${JSON.stringify({ ok: true, ...summary }, null, 2)}\n`);
      else {
        cli.out(`ok: ${path.relative(cli.cwd, r.file)}${r.wrangler ? ` with ${path.relative(cli.cwd, r.wrangler)}` : ""}: ${summary.types} types, ${summary.pools} pools, ${summary.schedules} schedules, ${summary.topics} topics\n`);
        for (const w of r.warnings) cli.out(`warning: ${w}\n`);
      }
    });

  try {
    await program.parseAsync(cli.argv, { from: "user" });
    return EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here too; commander has printed what it had to say.
      return e.exitCode === 0 || e.code === "commander.helpDisplayed" || e.code === "commander.version" ? EXIT.ok : EXIT.usage;
    }
    return explain(e, cli.err);
  }
}

// Run when executed as the bin (not when a test imports this module).
const entry = process.argv[1] ? path.resolve(process.argv[1]) : "";
if (/[\\/](cli\.js|edgequeue)$/.test(entry) || entry.endsWith(path.join("src", "cli", "index.ts"))) {
  void run({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd(), out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }).then((code) => {
    process.exitCode = code;
  });
}
