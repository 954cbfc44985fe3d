/**
 * `edgequeue jobs rerun <id> [--from <step>] [--payload <json>]`, or with a filter instead of an id
 * (docs/workflows.md "Rerun from a step"; docs/operating.md "The operator CLI"): a new job from a finished one,
 * or one for every finished job the filter matches (the API's bulk rerun: a dry run without `--yes`).
 *
 * @module
 */
import type { Command } from "commander";
import { filterOf, filterOptions, runBulk } from "./bulk";
import type { Io } from "./operator";
import { jsonObject, scopeOf, UsageError } from "./output";

export function rerunCommand(jobs: Command, io: Io): void {
  const print = (body: unknown, human: () => string) => io.out(`${io.json() ? JSON.stringify(body, null, 2) : human()}\n`);
  filterOptions(
    jobs
      .command("rerun [id]")
      .description("a new job from a finished one (linked both ways), from a step of its journal or its start — or one for every finished job of a filter")
      .option("--from <step>", "the step to run again from: the steps before it keep their journaled results")
      .option("--payload <json>", "the new job's payload (a JSON object; default: the job's own)"),
  ).action(async (id: string | undefined, o) => {
    if (id !== undefined) {
      const body = { ...(o.from ? { fromStep: o.from } : {}), ...(o.payload !== undefined ? { payload: jsonObject("--payload", o.payload) as never } : {}) };
      const j = await io.client().rerunJob(id, body);
      print({ job: j }, () => `${j.id}  ${j.state}  (rerun of ${j.rerunOf})`);
      return;
    }
    if (o.payload !== undefined) throw new UsageError("--payload: a rerun by filter keeps each job's own payload; give a job id to rerun one with another");
    const r = await runBulk(io.client(), "rerun", filterOf(o, scopeOf(o.scope)), o);
    print(r.body, () => r.text);
  });
}
