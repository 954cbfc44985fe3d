/** @jsxImportSource hono/jsx */
/**
 * Jobs: filter by type, state, scope and tag; paged with the API's cursor;
 * and the bulk actions — cancel or retry every job of the filter (pages/bulk.tsx),
 * prune terminal jobs older than N hours.
 *
 * @module
 */
import type { Job, ListQuery } from "../../job/schemas";
import { JOB_STATES } from "../../job/states";
import { ago } from "../format";
import { Csrf, Layout, StateChip, type PageFrame } from "../layout";
import { BulkCard } from "./bulk";

export function jobHref(id: string): string {
  return `/dashboard/jobs/${encodeURIComponent(id)}`;
}

export function JobsPage(props: { frame: PageFrame; query: Partial<ListQuery>; types: string[]; items: Job[]; nextCursor: string | null }) {
  const { query: q, items, frame } = props;
  const keep = new URLSearchParams();
  // Lists go back as the comma-separated text they came in as (String of an array joins with commas).
  for (const k of ["type", "state", "scopeType", "scopeId", "tag"] as const) if (q[k]) keep.set(k, String(q[k]));
  const next = props.nextCursor ? `/dashboard/jobs?${new URLSearchParams([...keep, ["cursor", props.nextCursor]])}` : null;
  return (
    <Layout {...frame}>
      <div class="card">
        <form class="filters" method="get" action="/dashboard/jobs">
          <label>
            Type
            <input name="type" list="job-types" value={q.type?.join(",") ?? ""} placeholder="any (or a,b)" />
          </label>
          <datalist id="job-types">
            {props.types.map((t) => (
              <option value={t} />
            ))}
          </datalist>
          <label>
            State
            <select name="state">
              <option value="">any</option>
              {JOB_STATES.map((s) => (
                <option value={s} selected={q.state?.length === 1 && q.state[0] === s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label>
            Scope type
            <input name="scopeType" value={q.scopeType ?? ""} placeholder="e.g. Account" />
          </label>
          <label>
            Scope id
            <input name="scopeId" value={q.scopeId ?? ""} />
          </label>
          <label>
            Tag
            <input name="tag" value={q.tag ?? ""} />
          </label>
          <button type="submit">Filter</button>
          <a href="/dashboard/jobs">clear</a>
        </form>
      </div>
      <div class="card" id="job-list" data-live>
        <table>
          <thead>
            <tr>
              <th>Id</th>
              <th>Type</th>
              <th>State</th>
              <th>Scope</th>
              <th class="num">Attempts</th>
              <th>Created</th>
              <th>Updated</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {items.length === 0 ? (
              <tr>
                <td colspan={8} class="muted">
                  No jobs match.
                </td>
              </tr>
            ) : (
              items.map((j) => (
                <tr data-job-id={j.id}>
                  <td>
                    <a href={jobHref(j.id)}>{j.id.length > 48 ? `${j.id.slice(0, 45)}…` : j.id}</a>
                  </td>
                  <td>{j.type}</td>
                  <td>
                    <StateChip state={j.state} />
                  </td>
                  <td>{j.scope ? `${j.scope.type}:${j.scope.id}` : <span class="muted">—</span>}</td>
                  <td class="num">
                    {j.attempts}/{j.maxAttempts}
                  </td>
                  <td title={String(j.createdAt)}>{ago(j.createdAt, frame.now)}</td>
                  <td title={String(j.updatedAt)}>{ago(j.updatedAt, frame.now)}</td>
                  <td class="wrap small">{j.lastError ? (j.lastError.length > 120 ? `${j.lastError.slice(0, 117)}…` : j.lastError) : ""}</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
        <p>
          {q.cursor ? <a href={`/dashboard/jobs?${keep}`}>« first page</a> : null} {next ? <a href={next}>next page »</a> : null}
        </p>
      </div>
      {/* Acting on jobs is an operator's (docs/operating.md "Tokens and roles"). */}
      {frame.canOperate === false ? null : (
        <div class="row">
          <BulkCard csrf={frame.csrf} fields={Object.fromEntries(keep)} />
          <div class="card">
            <h2>Prune</h2>
            <p class="muted small">Delete completed, failed, cancelled, superseded and expired jobs (every type) that finished more than this many hours ago.</p>
            <form method="post" action="/dashboard/bulk/prune" class="filters">
              <Csrf token={frame.csrf} />
              <label>
                Older than (hours)
                <input name="olderThanHours" type="number" min="0" step="any" value="24" required />
              </label>
              <button type="submit" class="danger">
                Prune
              </button>
            </form>
          </div>
        </div>
      )}
    </Layout>
  );
}
