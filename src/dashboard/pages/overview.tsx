/** @jsxImportSource hono/jsx */
/**
 * Overview: per job type, every state's count, failed by kind, and the
 * oldest pending lag — highlighted past `dashboard.lagAlertMs`, since lag,
 * not depth, is what should page a person — and the last hour's throughput.
 *
 * @module
 */
import { FAILURE_KINDS } from "../../job/states";
import type { Metrics } from "../../metrics/schemas";
import { perMinute, ThroughputChart } from "../chart";
import { duration } from "../format";
import { Layout, Num, type PageFrame } from "../layout";

const jobsOf = (type: string, state?: string) => `/dashboard/jobs?type=${encodeURIComponent(type)}${state ? `&state=${state}` : ""}`;

export function OverviewPage(props: { frame: PageFrame; metrics: Metrics; lagAlertMs: number }) {
  const { metrics, lagAlertMs } = props;
  const lagging = metrics.types.filter((t) => t.oldestPendingLagMs > lagAlertMs);
  return (
    <Layout {...props.frame}>
      <div id="overview-alerts" data-live>
        {lagging.length > 0 ? (
          <div class="banner error" role="alert">
            Lagging past {duration(lagAlertMs)}: {lagging.map((t) => `${t.type} (${duration(t.oldestPendingLagMs)})`).join(", ")}
          </div>
        ) : null}
      </div>
      <div class="card" id="throughput" data-live>
        <ThroughputChart points={perMinute(metrics.minutes, metrics.at, 60)} />
      </div>
      <div class="card" id="types" data-live>
        <table>
          <thead>
            <tr>
              <th>Type</th>
              <th class="num">Pending</th>
              <th class="num">Scheduled</th>
              <th class="num">Running</th>
              <th class="num">Completed</th>
              <th class="num">Failed</th>
              <th>By kind</th>
              <th class="num">Cancelled</th>
              <th class="num">Oldest pending lag</th>
            </tr>
          </thead>
          <tbody>
            {metrics.types.map((t) => {
              const alert = t.oldestPendingLagMs > lagAlertMs;
              const cell = (col: string) => ({ "data-type": t.type, "data-col": col });
              return (
                <tr class={alert ? "lag-alert" : ""}>
                  <td>
                    <a href={jobsOf(t.type)}>{t.type}</a>
                  </td>
                  <Num n={t.pending} href={jobsOf(t.type, "pending")} attrs={cell("pending")} />
                  <Num n={t.scheduled} attrs={cell("scheduled")} />
                  <Num n={t.running} href={jobsOf(t.type, "running")} attrs={cell("running")} />
                  <Num n={t.completed} href={jobsOf(t.type, "completed")} attrs={cell("completed")} />
                  <Num n={t.failed} href={jobsOf(t.type, "failed")} attrs={cell("failed")} />
                  <td class="kinds" {...cell("kinds")}>
                    {FAILURE_KINDS.filter((k) => t.failedByKind[k] > 0)
                      .map((k) => `${k.replace("_", " ")} ${t.failedByKind[k]}`)
                      .join(" · ")}
                  </td>
                  <Num n={t.cancelled} href={jobsOf(t.type, "cancelled")} attrs={cell("cancelled")} />
                  <td class={`num${alert ? " alert" : t.oldestPendingLagMs === 0 ? " zero" : ""}`} {...cell("lag")}>
                    {t.oldestPendingLagMs === 0 ? "—" : duration(t.oldestPendingLagMs)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        <p class="muted small">
          Counts come from each object's latest summary (about a second behind). Lag is highlighted past {duration(lagAlertMs)} (config{" "}
          <code>dashboard.lagAlertMs</code>). Prometheus: <code>GET /v1/metrics</code> with <code>Accept: text/plain</code>.
        </p>
      </div>
    </Layout>
  );
}
