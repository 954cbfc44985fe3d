/**
 * `edgequeue errors [--type <type>]` and `errors retry|rerun <type> <fingerprint>` (docs/operating.md "Error
 * groups"): attempts that ended in an error, grouped per type by their fingerprint, the most in the last hour first;
 * a group's failed jobs retried, or its finished jobs rerun.
 *
 * @module
 */
import type { Command } from "commander";
import type { Io } from "./operator";
import { int, table, when } from "./output";

export function errorsCommand(program: Command, io: Io): void {
  const print = (body: unknown, human: () => string) => io.out(`${io.json() ? JSON.stringify(body, null, 2) : human()}\n`);
  const errors = program.command("errors").description("error groups: failed attempts grouped by their error, per type");
  errors
    .command("list", { isDefault: true })
    .description("the groups, the most attempts in the last hour first")
    .option("--type <type>", "the groups of one type")
    .option("--limit <n>", "at most this many", int("--limit"))
    .action(async (o) => {
      const r = await io.client().listErrors({ type: o.type, limit: o.limit });
      print(r, () => {
        const rows = r.items.map((g) => [g.fingerprint, g.type, g.kind, g.lastHour, g.lastDay, g.total, when(g.lastAt), g.message.slice(0, 70)]);
        const more = r.complete ? "" : "\n(more objects hold jobs than one call reads: narrow it with --type)";
        return `${table(["GROUP", "TYPE", "KIND", "HOUR", "DAY", "TOTAL", "LAST", "MESSAGE"], rows)}${more}`;
      });
    });
  for (const action of ["retry", "rerun"] as const) {
    errors
      .command(`${action} <type> <fingerprint>`)
      .description(action === "retry" ? "send the group's newest failed jobs back to pending" : "rerun the group's newest failed jobs from their start")
      .action(async (type: string, fingerprint: string) => {
        const r = action === "retry" ? await io.client().retryErrorGroup({ type, fingerprint }) : await io.client().rerunErrorGroup({ type, fingerprint });
        print(r, () => `${action === "retry" ? "retried" : "reruns made:"} ${r.changed}${r.skipped ? `, skipped ${r.skipped}` : ""}`);
      });
  }
}
