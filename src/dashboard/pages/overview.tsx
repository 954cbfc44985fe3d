/** @jsxImportSource hono/jsx */
/**
 * Overview: per job type, every state's count, failed by kind, and the
 * oldest pending lag — highlighted past `dashboard.lagAlertMs`, since lag,
 * not depth, is what should page a person — the last hour's throughput, and
 * a pause/resume button per type (docs/http-api.md "Pausing a type").
 *
 * @module
 */
import type { Metrics } from "../../metrics/schemas";
import { perMinute, ThroughputChart } from "../chart";
import { duration } from "../format";
import { Csrf, Layout, type PageFrame } from "../layout";
import { StatsTable } from "../stats-table";

const jobsOf = (type: string) => `/dashboard/jobs?type=${encodeURIComponent(type)}`;

export function OverviewPage(props: { frame: PageFrame; metrics: Metrics; lagAlertMs: number; paused: ReadonlySet<string> }) {
  const { metrics, lagAlertMs, paused } = props;
  const lagging = metrics.types.filter((t) => t.oldestPendingLagMs > lagAlertMs);
  const unhandled = metrics.types.filter((t) => t.unhandled);
  return (
    <Layout {...props.frame}>
      <div id="overview-alerts" data-live>
        {lagging.length > 0 ? (
          <div class="banner error" role="alert">
            Lagging past {duration(lagAlertMs)}: {lagging.map((t) => `${t.type} (${duration(t.oldestPendingLagMs)})`).join(", ")}
          </div>
        ) : null}
        {unhandled.length > 0 ? (
          <div class="banner error" role="alert" id="unhandled-types">
            Due jobs that nothing will run — no binding, not declared in the config, no pull claim in the last hour (a typo, or a worker
            not started): {unhandled.map((t) => t.type).join(", ")}
          </div>
        ) : null}
      </div>
      <div class="card" id="throughput" data-live>
        <ThroughputChart points={perMinute(metrics.minutes, metrics.at, 60)} />
      </div>
      <div class="card" id="cost" data-live>
        <CostCard metrics={metrics} />
      </div>
      <div class="card" id="types" data-live>
        <StatsTable
          first="Type"
          empty="No job types yet."
          actionHead="Dispatch"
          rows={metrics.types.map((t) => ({
            label: paused.has(t.type) ? (
              <>
                {t.type} <span class="chip">paused</span>
              </>
            ) : (
              t.type
            ),
            stats: t,
            jobs: jobsOf(t.type),
            key: t.type,
            alert: t.oldestPendingLagMs > lagAlertMs || t.unhandled,
            action: <PauseButton type={t.type} paused={paused.has(t.type)} csrf={props.frame.csrf} />,
          }))}
        />
        <p class="muted small">
          Counts come from each object's latest summary (about a second behind). Lag is highlighted past {duration(lagAlertMs)} (config{" "}
          <code>dashboard.lagAlertMs</code>). Prometheus: <code>GET /v1/metrics</code> with <code>Accept: text/plain</code>.
        </p>
      </div>
    </Layout>
  );
}

/**
 * CostCard: what the last hour's jobs cost in what Cloudflare bills (docs/design.md "What a job costs"): rows
 * written per job created in the hour, across every object kind, and each kind's share.
 */
function CostCard(props: { metrics: Metrics }) {
  const jobs = props.metrics.minutes.reduce((n, m) => n + m.enqueued, 0);
  const byKind = new Map<string, { written: number; requests: number }>();
  for (const u of props.metrics.objectMinutes) {
    const k = byKind.get(u.object) ?? { written: 0, requests: 0 };
    k.written += u.rowsWritten;
    k.requests += u.requests;
    byKind.set(u.object, k);
  }
  const written = [...byKind.values()].reduce((n, k) => n + k.written, 0);
  const per = (n: number) => (jobs === 0 ? "–" : (n / jobs).toFixed(1));
  return (
    <>
      <h2>Cost, last hour</h2>
      <p>
        <strong data-rows-per-job>{per(written)}</strong> rows written per job ({written.toLocaleString("en")} rows, {jobs.toLocaleString("en")} jobs created)
      </p>
      <table>
        <thead>
          <tr>
            <th>Object</th>
            <th class="num">Rows written</th>
            <th class="num">per job</th>
            <th class="num">Requests</th>
          </tr>
        </thead>
        <tbody>
          {[...byKind].map(([kind, k]) => (
            <tr>
              <td>{kind}</td>
              <td class="num">{k.written.toLocaleString("en")}</td>
              <td class="num">{per(k.written)}</td>
              <td class="num">{k.requests.toLocaleString("en")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted small">
        Counted by each object's meter from its statements' own cursors; Prometheus: <code>edgequeue_storage_rows_written_total</code>. A job's
        deletion after retention falls in a later hour than its creation.
      </p>
    </>
  );
}

/** PauseButton: a paused type still takes enqueues; nothing of it starts until resumed. */
function PauseButton(props: { type: string; paused: boolean; csrf: string }) {
  return (
    <form method="post" action={`/dashboard/types/${props.paused ? "resume" : "pause"}`} class="inline">
      <Csrf token={props.csrf} />
      <input type="hidden" name="type" value={props.type} />
      <button type="submit" class="secondary" data-pause={props.type}>
        {props.paused ? "Resume" : "Pause"}
      </button>
    </form>
  );
}
