/**
 * `edgequeue signal <jobId> <name> [data-json]` (docs/operating.md "The operator CLI"): send a signal to a job
 * and say what it did. A signal the job is not waiting for is kept for a wait to come, and the job goes on waiting
 * for what it waits for — so when it waits for something else (a misspelled name, a token, an event, children),
 * the command warns on stderr, naming what the job waits for. Still exit 0: the signal was taken and is kept.
 *
 * @module
 */
import type { Command } from "commander";
import type { SignalResult } from "../job/schemas";
import type { Io } from "./operator";
import { UsageError, when } from "./output";

type Wait = NonNullable<SignalResult["waitingFor"]>[number];

/** waitWords: one wait as a person reads it — `signal "approve" (no timeout)`, `child "label" (job …)`. */
export function waitWords(w: Wait): string {
  if (w.kind === "pause") return "its resume (it is paused: edgequeue jobs resume <id>)";
  const kind = { signal: "signal", token: "wait token", event: "event on", invoke: "child" }[w.kind];
  const child = w.kind === "invoke" && w.child ? ` (job ${w.child})` : "";
  const until = w.kind === "invoke" ? "" : w.until === null ? " (no timeout)" : ` until ${when(w.until)}`;
  return `${kind} ${JSON.stringify(w.name)}${child}${until}`;
}

/** dataOf: the optional `[data-json]` argument, any JSON (default null). */
function dataOf(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`data-json: not JSON (${(e as Error).message}); give any JSON value, e.g. '{"approved":true}' or '"yes"'`);
  }
}

export function signalCommand(program: Command, io: Io): void {
  program
    .command("signal <jobId> <name> [data-json]")
    .description("send a signal to a job: it ends the job's wait for a signal of this name, or is kept for that wait to come")
    .action(async (id: string, name: string, data: string | undefined) => {
      const r = await io.client().signal(id, name, dataOf(data));
      const signal = `signal ${JSON.stringify(name)}`;
      if (io.json()) io.out(`${JSON.stringify(r, null, 2)}\n`);
      else if (r.delivered === "resumed") io.out(`${r.id}  resumed: the ${signal} ended its wait; it runs again now\n`);
      else if (r.waitingFor === null) io.out(`${r.id}  kept: it is not waiting now; the ${signal} is kept for its wait of that name to come\n`);
      else io.out(`${r.id}  kept: it is not waiting for ${signal}\n`);
      // Kept by a job that waits for something else: it goes on waiting, which nobody would notice without this.
      if (r.delivered === "kept" && r.waitingFor !== null && r.waitingFor.length > 0) {
        io.err(
          `warning: the ${signal} was kept, but job ${r.id} waits for ${r.waitingFor.map(waitWords).join(", ")}; ` +
            `it goes on waiting for that, and the signal only ends a wait for "${name}" to come (misspelled?)\n`,
        );
      }
    });
}
