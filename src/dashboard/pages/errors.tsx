/** @jsxImportSource hono/jsx */
/**
 * Error groups (docs/operating.md "Error groups"): failed attempts grouped per type by their error, the most in the
 * last hour first, each with its first and last job and a retry of its failed jobs or a rerun of its finished ones.
 *
 * @module
 */
import type { ErrorGroup } from "../../job/schemas";
import { ago } from "../format";
import { Csrf, Layout, type PageFrame } from "../layout";
import { jobHref } from "./jobs";

export function ErrorsPage(props: { frame: PageFrame; items: ErrorGroup[]; complete: boolean; type: string | null }) {
  const { frame } = props;
  return (
    <Layout {...frame}>
      <div id="errors" data-live>
        <div class="card">
          <form method="get" action="/dashboard/errors" class="inline">
            <input name="type" placeholder="type" value={props.type ?? ""} /> <button type="submit">Filter</button>
          </form>
          {props.complete ? null : <p class="muted small">More objects hold jobs than one page reads: filter by type to see them all.</p>}
          {props.items.length === 0 ? (
            <p class="muted">No errors in the last week.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Type</th>
                  <th>Error</th>
                  <th class="num">Last hour</th>
                  <th class="num">Last day</th>
                  <th class="num">Total</th>
                  <th>First</th>
                  <th>Last</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {props.items.map((g) => (
                  <tr data-group={g.fingerprint}>
                    <td>
                      <a href={`/dashboard/jobs?type=${encodeURIComponent(g.type)}&state=failed`}>{g.type}</a>
                    </td>
                    <td class="wrap small">
                      <span class="muted">{g.kind}</span> <code>{g.message}</code>
                      {g.frame ? <div class="muted">{g.frame}</div> : null}
                    </td>
                    <td class="num">{g.lastHour}</td>
                    <td class="num">{g.lastDay}</td>
                    <td class="num">{g.total}</td>
                    <td>
                      <a href={jobHref(g.firstJobId)}>{ago(g.firstAt, frame.now)}</a>
                    </td>
                    <td>
                      <a href={jobHref(g.lastJobId)}>{ago(g.lastAt, frame.now)}</a>
                    </td>
                    <td>
                      {(frame.canOperate === false ? [] : (["retry", "rerun"] as const)).map((action) => (
                        <form method="post" action={`/dashboard/errors/${action}`} class="inline">
                          <Csrf token={frame.csrf} />
                          <input type="hidden" name="type" value={g.type} />
                          <input type="hidden" name="fingerprint" value={g.fingerprint} />
                          <button type="submit" class="small" data-group-action={action} title={action === "retry" ? "Send its newest failed jobs back to pending" : "Rerun its newest failed jobs from their start"}>
                            {action === "retry" ? "Retry failed" : "Rerun"}
                          </button>
                        </form>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </div>
    </Layout>
  );
}
