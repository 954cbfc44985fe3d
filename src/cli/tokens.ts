/**
 * `edgequeue tokens new <name> --role <role> [--types a,b] [--scope-types T]` and `edgequeue audit` (docs/operating.md
 * "Tokens and roles"): a new random token and the QUEUE_TOKENS entry that admits it — its SHA-256, never the token
 * itself — made here, with no call to the queue; and the audit list of operator actions, newest first.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import type { Command } from "commander";
import { ROLES } from "../auth/roles";
import type { Io } from "./operator";
import { int, table, UsageError, when } from "./output";

const list = (flag: string) => (v: string) => {
  const items = v.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (items.length === 0) throw new UsageError(`${flag}: give at least one name, comma-separated`);
  return items;
};

export function tokensCommand(program: Command, out: (s: string) => void): void {
  const tokens = program.command("tokens").description("tokens with names and roles (QUEUE_TOKENS)");
  tokens
    .command("new <name>")
    .description("a new random token, and the QUEUE_TOKENS entry (its SHA-256) that admits it; nothing is sent anywhere")
    .requiredOption("--role <role>", `one of ${ROLES.join(", ")}`)
    .option("--types <types>", "the job types it may touch, comma-separated", list("--types"))
    .option("--scope-types <types>", "the scope types it may touch, comma-separated", list("--scope-types"))
    .action((name: string, o: { role: string; types?: string[]; scopeTypes?: string[] }) => {
      if (!(ROLES as readonly string[]).includes(o.role)) throw new UsageError(`--role: "${o.role}" is not a role; one of ${ROLES.join(", ")}`);
      if (!/^[A-Za-z0-9._@-]{1,64}$/.test(name)) throw new UsageError(`<name>: "${name}" is not 1-64 characters of A-Z a-z 0-9 . _ @ -`);
      const token = `eq_${randomBytes(24).toString("base64url")}`;
      const entry = { name, role: o.role, sha256: createHash("sha256").update(token).digest("hex"), ...(o.types ? { types: o.types } : {}), ...(o.scopeTypes ? { scopeTypes: o.scopeTypes } : {}) };
      out(
        `token (give it to its holder; it is shown once and not stored):\n  ${token}\n` +
          `QUEUE_TOKENS entry (add it to the JSON array: npx wrangler secret put QUEUE_TOKENS):\n  ${JSON.stringify(entry)}\n`,
      );
    });
}

export function auditCommand(program: Command, io: Io): void {
  program
    .command("audit")
    .description("operator actions with the token that made each, newest first")
    .option("--by <name>", "one token's actions")
    .option("--action <action>", "one action (an operationId, or `dashboard <path>`)")
    .option("--limit <n>", "at most this many (default 100)", int("--limit"))
    .action(async (o: { by?: string; action?: string; limit?: number }) => {
      const r = await io.client().listAudit({ ...(o.by ? { token: o.by } : {}), ...(o.action ? { action: o.action } : {}), ...(o.limit ? { limit: o.limit } : {}) });
      if (io.json()) return io.out(`${JSON.stringify(r, null, 2)}\n`);
      const rows = r.items.map((e) => [when(e.at), e.token, e.role, e.action, JSON.stringify(e.detail).slice(0, 80)]);
      io.out(`${table(["AT", "TOKEN", "ROLE", "ACTION", "DETAIL"], rows)}${r.next !== null ? "\n(older entries: --limit, or GET /v1/audit?before=" + r.next + ")" : ""}\n`);
    });
}
