/**
 * `edgequeue budgets` and `budgets lift <name>` (docs/operating.md "Spend caps"): each budget's window, what it spent
 * and what it holds paused; lifting one's pause for the rest of its window.
 *
 * @module
 */
import type { Command } from "commander";
import type { Io } from "./operator";
import { table } from "./output";

export function budgetsCommand(program: Command, io: Io): void {
  const budgets = program.command("budgets").description("spend caps: each budget's window, what it spent, what it holds paused");
  budgets
    .command("list", { isDefault: true })
    .description("each budget of the config, with its window's spend")
    .action(async () => {
      const r = await io.client().listBudgets();
      if (io.json()) return io.out(`${JSON.stringify(r, null, 2)}\n`);
      const state = (b: (typeof r.items)[number]) => (b.paused.length > 0 ? `PAUSED ${b.paused.join(",")}` : b.hardCrossedAt !== null ? "over hard (lifted)" : b.softCrossedAt !== null ? "over soft" : "ok");
      const rows = r.items.map((b) => [b.name, b.window, b.unit, b.types?.join(",") ?? "(queue)", b.spent, b.soft ?? "-", b.hard ?? "-", state(b)]);
      io.out(`${table(["BUDGET", "WINDOW", "UNIT", "TYPES", "SPENT", "SOFT", "HARD", "STATE"], rows)}\n`);
    });
  budgets
    .command("lift <name>")
    .description("resume what the budget's hard limit paused, for the rest of its window")
    .action(async (name: string) => {
      const r = await io.client().liftBudget(name);
      io.out(io.json() ? `${JSON.stringify(r, null, 2)}\n` : `${r.budget.name}: lifted until its ${r.budget.window} turns\n`);
    });
}
