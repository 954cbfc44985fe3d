/** @jsxImportSource hono/jsx */
/**
 * A job page's journal of durable steps (docs/operating.md "Dashboard and metrics"): each step, sleep and wait with
 * its attempt, times and result — a child's step linked to the child — and, on a finished job, "Rerun from here"
 * for the first step of each name (docs/workflows.md "Rerun from a step").
 *
 * @module
 */
import type { Job, StepView } from "../../job/schemas";
import { duration, utcMs } from "../format";
import { Csrf } from "../layout";
import { jobHref } from "./jobs";

/** Past this many characters a payload or result is cut on the page (the API has it whole). */
const SHOWN_MAX_CHARS = 64 * 1024;

export function clip(text: string): string {
  return text.length <= SHOWN_MAX_CHARS ? text : `${text.slice(0, SHOWN_MAX_CHARS)}\n… ${text.length - SHOWN_MAX_CHARS} more characters (GET /v1/jobs/{id} has it all)`;
}

/** The journal's waits (docs/workflows.md): open until what they wait for ends them. */
const WAIT_KINDS: ReadonlySet<string> = new Set(["signal", "token_wait", "invoke", "event"]);
const KIND_NOTE: Record<string, string> = { signal: "(wait for a signal)", token: "(wait token made)", token_wait: "(wait for the token)", invoke: "(child job)", event: "(wait for an event)" };

/** childOf: an invoke entry's child — named by its result once it ended, by the job's waits while open. */
function childOf(s: StepView, j: Job): string | null {
  if (s.kind !== "invoke") return null;
  const ended = s.result as { child?: string } | null;
  return ended?.child ?? j.waitingFor?.find((w) => w.kind === "invoke" && w.name === s.name)?.child ?? null;
}

/** firstOfName: whether the journal's entry at `i` is the first of its name (the one a rerun from that name starts at). */
function firstOfName(journal: readonly StepView[], i: number): boolean {
  return journal.findIndex((e) => e.name === journal[i]!.name) === i;
}

export function StepsCard(props: { job: Job; journal: StepView[]; csrf: string; canRerun: boolean }) {
  return (
          <div class="card" id="steps">
            <h2>Steps</h2>
            <table>
              <thead>
                <tr>
                  <th class="num">#</th>
                  <th>Step</th>
                  <th class="num">Attempt</th>
                  <th>Started</th>
                  <th>Took</th>
                  <th>Result</th>
                  {props.canRerun ? <th></th> : null}
                </tr>
              </thead>
              <tbody>
                {props.journal.map((s, i) => (
                  <tr>
                    <td class="num">{s.seq}</td>
                    <td>
                      {childOf(s, props.job) ? (
                        <a href={jobHref(childOf(s, props.job)!)} data-child>
                          <code>{s.name}</code>
                        </a>
                      ) : (
                        <code>{s.name}</code>
                      )}{" "}
                      {s.kind === "sleep" ? <span class="muted">(sleep until {utcMs(s.wakeAt ?? 0)})</span> : <span class="muted">{KIND_NOTE[s.kind] ?? ""}</span>}
                    </td>
                    <td class="num">{s.attempt}</td>
                    <td>{utcMs(s.startedAt)}</td>
                    <td class="muted">{s.finishedAt === null ? (WAIT_KINDS.has(s.kind) ? "waiting" : "not finished") : s.kind === "sleep" ? "" : duration(s.finishedAt - s.startedAt)}</td>
                    <td class="wrap small">
                      {s.kind === "sleep" ? "" : s.finishedAt === null ? <em>{WAIT_KINDS.has(s.kind) ? `open${s.wakeAt === null ? "" : `, times out ${utcMs(s.wakeAt)}`}` : "started, no result journaled"}</em> : <code>{clip(JSON.stringify(s.result))}</code>}
                    </td>
                    {props.canRerun ? (
                      <td>
                        {firstOfName(props.journal, i) ? (
                          <form method="post" action={`${jobHref(props.job.id)}/rerun`} class="inline">
                            <Csrf token={props.csrf} />
                            <input type="hidden" name="fromStep" value={s.name} />
                            <button type="submit" class="small" data-rerun-from={s.name} title="A new job: the steps above keep their results, this one and those after run again">
                              Rerun from here
                            </button>
                          </form>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
  );
}
