/** @jsxImportSource hono/jsx */
/**
 * One job: its facts, payload and result (pretty-printed and escaped: the
 * page never renders stored JSON as markup), what it waits for, last error, its kept log lines, the
 * timeline of its transitions, and the actions its state allows — a form per signal it waits for among them.
 *
 * @module
 */
import type { Children, Job, JobLogs, StepView, Timeline } from "../../job/schemas";
import { TRANSITIONS } from "../../job/transitions";
import { TERMINAL_STATES } from "../../job/states";
import { duration, pretty, utc, utcMs } from "../format";
import { Csrf, Layout, StateChip, type PageFrame } from "../layout";
import { jobHref } from "./jobs";
import { clip, StepsCard } from "./job-steps";

/** What a wait of `waitingFor` is, in words. */
const WAIT_WORDS: Record<string, string> = { signal: "signal", token: "wait token", event: "event on" };

/** How many of a parent's children the page lists (the API pages through all: GET /v1/jobs/{id}/children). */
export const CHILDREN_SHOWN = 100;

export function JobPage(props: { frame: PageFrame; job: Job; timeline: Timeline; journal: StepView[]; logs: JobLogs["items"]; children: Children; live: boolean }) {
  const { job: j, frame } = props;
  // A reader's page shows no action (docs/operating.md "Tokens and roles").
  const acts = frame.canOperate !== false;
  const canRetry = acts && (TRANSITIONS.retry.from as readonly string[]).includes(j.state);
  const canCancel = acts && (TRANSITIONS.cancel.from as readonly string[]).includes(j.state);
  // A rerun is made of a finished job (docs/workflows.md "Rerun from a step").
  const canRerun = acts && (TERMINAL_STATES as readonly string[]).includes(j.state);
  // One job paused, or asked to pause, shows its pause among its waits (docs/http-api.md "Pause and resume one job").
  const paused = (j.waitingFor ?? []).some((w) => w.kind === "pause");
  const canPause = acts && !paused && (j.state === "pending" || j.state === "running" || j.state === "waiting");
  const steps = props.timeline.steps;
  return (
    <Layout {...frame}>
      {props.live || !acts ? null : <SignalForms job={j} csrf={frame.csrf} />}
      <div id="job" data-live>
        <div class="card">
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{j.id}</code>
            </dd>
            <dt>Type</dt>
            <dd>
              <a href={`/dashboard/jobs?type=${encodeURIComponent(j.type)}`}>{j.type}</a>
            </dd>
            <dt>State</dt>
            <dd>
              <StateChip state={j.state} /> {j.failureKind ? <span class="muted">({j.failureKind})</span> : null}
              {j.cancelReason ? <span class="muted"> — {j.cancelReason}</span> : null}
            </dd>
            {j.waitingFor ? (
              <>
                <dt>Waiting for</dt>
                <dd data-waiting-for>
                  {j.waitingFor.map((w, i) => (
                    <>
                      {i > 0 ? ", " : null}
                      {w.kind === "pause" ? (
                        <>its resume <span class="muted">({j.state === "running" ? "pausing after its current step" : "paused"})</span></>
                      ) : w.kind === "invoke" ? (
                        <>
                          child {w.child ? <a href={jobHref(w.child)}><code>{w.name}</code></a> : <code>{w.name}</code>}
                        </>
                      ) : (
                        <>
                          {WAIT_WORDS[w.kind] ?? w.kind} <code>{w.name}</code>
                          <span class="muted">{w.until === null ? " (no timeout)" : ` until ${utc(w.until)}`}</span>
                        </>
                      )}
                    </>
                  ))}
                </dd>
              </>
            ) : null}
            {j.rerunOf ? (
              <>
                <dt>Rerun of</dt>
                <dd data-rerun-of>
                  <a href={jobHref(j.rerunOf)}>
                    <code>{j.rerunOf}</code>
                  </a>
                </dd>
              </>
            ) : null}
            {j.reruns.length > 0 ? (
              <>
                <dt>Reruns</dt>
                <dd data-reruns>
                  {j.reruns.map((r) => (
                    <>
                      <a href={jobHref(r)}>
                        <code>{r}</code>
                      </a>{" "}
                    </>
                  ))}
                </dd>
              </>
            ) : null}
            {j.parentId ? (
              <>
                <dt>Parent</dt>
                <dd data-parent>
                  <a href={jobHref(j.parentId)}>
                    <code>{j.parentId}</code>
                  </a>
                </dd>
              </>
            ) : null}
            {j.progress !== null ? (
              <>
                <dt>Progress</dt>
                <dd data-progress>
                  {typeof j.progress === "number" ? (
                    <>
                      <progress max="100" value={String(j.progress)}></progress> {Math.round(j.progress)}%
                    </>
                  ) : (
                    <code>{clip(JSON.stringify(j.progress))}</code>
                  )}
                  <span class="muted"> at {utcMs(j.progressAt ?? 0)}</span>
                </dd>
              </>
            ) : null}
            <dt>Scope</dt>
            <dd>{j.scope ? <a href={`/dashboard/jobs?scopeType=${encodeURIComponent(j.scope.type)}&scopeId=${encodeURIComponent(j.scope.id)}`}>{`${j.scope.type}:${j.scope.id}`}</a> : "—"}</dd>
            <dt>Attempts</dt>
            <dd>
              {j.attempts} of {j.maxAttempts}
            </dd>
            <dt>Priority</dt>
            <dd>{j.priority}</dd>
            <dt>Run at</dt>
            <dd>{j.state === "waiting" ? "when its wait ends" : utc(j.runAt)}</dd>
            <dt>Created</dt>
            <dd>{utc(j.createdAt)}</dd>
            <dt>Started</dt>
            <dd>{utc(j.startedAt)}</dd>
            <dt>Finished</dt>
            <dd>{utc(j.finishedAt)}</dd>
            {j.expiresAt !== null ? (
              <>
                <dt>Expires</dt>
                <dd>{utc(j.expiresAt)} if not started by then</dd>
              </>
            ) : null}
            {j.dedupeKey ? (
              <>
                <dt>Dedupe key</dt>
                <dd>
                  <code>{j.dedupeKey}</code> ({j.dedupeMode})
                </dd>
              </>
            ) : null}
            {j.tags.length > 0 ? (
              <>
                <dt>Tags</dt>
                <dd>{j.tags.join(", ")}</dd>
              </>
            ) : null}
          </dl>
          <p>
            {canRetry ? (
              <form method="post" action={`${jobHref(j.id)}/retry`} class="inline">
                <Csrf token={frame.csrf} />
                <button type="submit">Retry</button>
              </form>
            ) : null}{" "}
            {canRerun ? (
              <form method="post" action={`${jobHref(j.id)}/rerun`} class="inline">
                <Csrf token={frame.csrf} />
                <button type="submit" data-rerun="">
                  Rerun
                </button>
              </form>
            ) : null}{" "}
            {canPause ? (
              <form method="post" action={`${jobHref(j.id)}/pause`} class="inline">
                <Csrf token={frame.csrf} />
                <button type="submit">Pause</button>
              </form>
            ) : null}
            {paused && acts ? (
              <form method="post" action={`${jobHref(j.id)}/resume`} class="inline">
                <Csrf token={frame.csrf} />
                <button type="submit">Resume</button>
              </form>
            ) : null}{" "}
            {canCancel ? (
              <form method="post" action={`${jobHref(j.id)}/cancel`} class="inline">
                <Csrf token={frame.csrf} />
                <button type="submit" class="danger">
                  Cancel
                </button>
              </form>
            ) : null}
          </p>
        </div>
        {j.result !== null || j.lastError ? (
          <div class="card">
            {j.result !== null ? (
              <>
                <h2>Result</h2>
                <pre id="result">{clip(pretty(j.result))}</pre>
              </>
            ) : null}
            {j.lastError ? (
              <>
                <h2>Last error</h2>
                <pre id="last-error">{j.lastError}</pre>
              </>
            ) : null}
          </div>
        ) : null}
        {props.journal.length > 0 ? <StepsCard job={j} journal={props.journal} csrf={frame.csrf} canRerun={canRerun} /> : null}
        {props.children.children.length > 0 ? (
          <div class="card" id="children">
            <h2>Children</h2>
            {props.children.next !== null ? <p class="muted small">The first {CHILDREN_SHOWN} (GET /v1/jobs/…/children pages through them all).</p> : null}
            <table>
              <thead>
                <tr>
                  <th>Step</th>
                  <th>Child</th>
                  <th>Type</th>
                  <th>State</th>
                  <th>Finished</th>
                </tr>
              </thead>
              <tbody>
                {props.children.children.map((c) => (
                  <tr data-child-row>
                    <td>
                      <code>{c.step}</code>
                    </td>
                    <td class="wrap small">
                      <a href={jobHref(c.id)}>
                        <code>{c.id}</code>
                      </a>
                    </td>
                    <td>{c.job ? c.job.type : "—"}</td>
                    <td>{c.job ? <StateChip state={c.job.state} /> : <span class="muted">deleted</span>}</td>
                    <td>{c.job ? utc(c.job.finishedAt) : ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {props.logs.length > 0 ? (
          <div class="card" id="logs">
            <h2>Logs</h2>
            <p class="muted small">The newest 100 ctx.log lines, oldest first.</p>
            <table>
              <thead>
                <tr>
                  <th>At</th>
                  <th class="num">Attempt</th>
                  <th>Message</th>
                  <th>Fields</th>
                </tr>
              </thead>
              <tbody>
                {props.logs.map((l) => (
                  <tr>
                    <td>{utcMs(l.at)}</td>
                    <td class="num">{l.attempt}</td>
                    <td class="wrap">{l.message}</td>
                    <td class="wrap small">{l.fields === null ? "" : <code>{JSON.stringify(l.fields)}</code>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <div class="card">
          <h2>Timeline</h2>
          {props.timeline.earlier > 0 ? <p class="muted small">{props.timeline.earlier} earlier steps not shown (GET /v1/jobs/…/timeline?limit=1000).</p> : null}
          <table>
            <thead>
              <tr>
                <th>At</th>
                <th>Since previous</th>
                <th>State</th>
                <th class="num">Attempt</th>
                <th>Note</th>
                <th title="The version of the code that ran the attempt this step ended (docs/deploy.md)">Code</th>
              </tr>
            </thead>
            <tbody>
              {steps.map((s, i) => (
                <tr>
                  <td>{utcMs(s.at)}</td>
                  <td class="muted">{i === 0 ? "" : `+${duration(s.at - steps[i - 1]!.at)}`}</td>
                  <td>
                    <StateChip state={s.state} />
                  </td>
                  <td class="num">{s.attempt}</td>
                  <td class="wrap small">{s.note ?? ""}</td>
                  <td class="small muted">{s.version ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
      {/* Outside the live region, and left out of refreshes (`live`): a payload does not change, and can be big. */}
      {props.live ? null : (
        <div class="card">
          <h2>Payload</h2>
          <pre id="payload">{clip(pretty(j.payload))}</pre>
        </div>
      )}
    </Layout>
  );
}

/**
 * SignalForms: for each signal the job waits for, a form that sends it, with optional JSON data — a person's
 * "Approve". Outside the page's live part (a refresh would drop what was typed), so it shows what the job waited for
 * when the page was loaded; a signal sent after the wait ended is kept, and the notice says so.
 */
function SignalForms(props: { job: Job; csrf: string }) {
  const signals = (props.job.waitingFor ?? []).filter((w) => w.kind === "signal");
  if (signals.length === 0) return null;
  return (
    <div class="card" id="signal">
      <h2>Send a signal</h2>
      <p class="muted small">
        It ends the job's wait: the job runs again and <code>ctx.waitForSignal</code> answers <code>{"{ data }"}</code> (null when left empty).
      </p>
      {signals.map((w) => (
        <form method="post" action={`${jobHref(props.job.id)}/signal`} class="signal" data-signal={w.name}>
          <Csrf token={props.csrf} />
          <input type="hidden" name="name" value={w.name} />
          <label>
            Data (JSON, optional)
            <textarea name="data" rows={2} placeholder='{"approved": true}'></textarea>
          </label>
          <button type="submit">Send {JSON.stringify(w.name)}</button>
          <span class="muted small">{w.until === null ? "waits with no timeout" : `times out ${utc(w.until)}`}</span>
        </form>
      ))}
    </div>
  );
}
