/** @jsxImportSource hono/jsx */
/**
 * Overview: per job type, every state's count, failed by kind, and the
 * oldest pending lag — highlighted past `dashboard.lagAlertMs`, since lag,
 * not depth, is what should page a person — the last hour's throughput, and
 * a pause/resume button per type (docs/http-api.md "Pausing a type").
 *
 * @module
 */
import type { BudgetView } from "../../job/schemas/budgets";
import type { Metrics } from "../../metrics/schemas";
import { perMinute, ThroughputChart } from "../chart";
import { duration, utc } from "../format";
import { Csrf, Layout, type PageFrame } from "../layout";
import { StatsTable } from "../stats-table";

const jobsOf = (type: string) => `/dashboard/jobs?type=${encodeURIComponent(type)}`;

export function OverviewPage(props: { frame: PageFrame; metrics: Metrics; lagAlertMs: number; paused: ReadonlySet<string>; budgets: readonly BudgetView[] }) {
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
        <BudgetBanners budgets={props.budgets} frame={props.frame} />
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
            action: props.frame.canOperate === false ? (paused.has(t.type) ? "paused" : "") : <PauseButton type={t.type} paused={paused.has(t.type)} csrf={props.frame.csrf} />,
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

/** The object kinds whose rows grow with jobs; the rest (the catalog, the schedules, parked claims) are the queue's fixed work. */
const PER_JOB_KINDS = new Set(["scope", "pool"]);

/**
 * CostCard: what the last hour cost in what Cloudflare bills (docs/design.md "What a job costs"; docs/operating.md
 * "What the meters count"): rows written per job created in the hour, per object kind — new objects' setup (their
 * migrations) apart, the kinds that work per job apart from the fixed ones — and the jobs of each type behind it.
 * Rows are counted per object, not per type: a type's share is its jobs'.
 */
function CostCard(props: { metrics: Metrics }) {
  const byType = new Map<string, { enqueued: number; completed: number; failed: number }>();
  for (const m of props.metrics.minutes) {
    const t = byType.get(m.type) ?? { enqueued: 0, completed: 0, failed: 0 };
    t.enqueued += m.enqueued;
    t.completed += m.completed;
    t.failed += m.failed;
    byType.set(m.type, t);
  }
  const jobs = [...byType.values()].reduce((n, t) => n + t.enqueued, 0);
  const byKind = new Map<string, { written: number; setup: number; requests: number }>();
  for (const u of props.metrics.objectMinutes) {
    const k = byKind.get(u.object) ?? { written: 0, setup: 0, requests: 0 };
    k.written += u.rowsWritten;
    k.setup += u.setupRowsWritten ?? 0;
    k.requests += u.requests;
    byKind.set(u.object, k);
  }
  const sum = (f: (k: { written: number; setup: number; requests: number }, kind: string) => number) => [...byKind].reduce((n, [kind, k]) => n + f(k, kind), 0);
  const written = sum((k) => k.written);
  const setup = sum((k) => k.setup);
  const perJob = sum((k, kind) => (PER_JOB_KINDS.has(kind) ? k.written - k.setup : 0));
  const fixed = written - setup - perJob;
  const per = (n: number) => (jobs === 0 ? "–" : (n / jobs).toFixed(1));
  return (
    <>
      <h2>Cost, last hour</h2>
      <p>
        <strong data-rows-per-job>{per(written)}</strong> rows written per job ({written.toLocaleString("en")} rows, {jobs.toLocaleString("en")} jobs created):{" "}
        <span data-cost-part="jobs">{per(perJob)} the jobs' own work</span>, <span data-cost-part="fixed">{per(fixed)} fixed work</span> (the catalog, schedules, parked claims) and{" "}
        <span data-cost-part="setup">{per(setup)} new objects' setup</span> ({setup.toLocaleString("en")} rows of migrations: a new tenant's object sets up once).
      </p>
      <table>
        <thead>
          <tr>
            <th>Object</th>
            <th class="num">Rows written</th>
            <th class="num">of which setup</th>
            <th class="num">per job</th>
            <th class="num">Requests</th>
          </tr>
        </thead>
        <tbody>
          {[...byKind].map(([kind, k]) => (
            <tr data-cost-object={kind}>
              <td>
                {kind} <span class="muted small">{PER_JOB_KINDS.has(kind) ? "per job" : "fixed"}</span>
              </td>
              <td class="num">{k.written.toLocaleString("en")}</td>
              <td class="num">{k.setup.toLocaleString("en")}</td>
              <td class="num">{per(k.written - k.setup)}</td>
              <td class="num">{k.requests.toLocaleString("en")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table>
        <thead>
          <tr>
            <th>Type</th>
            <th class="num">Created</th>
            <th class="num">Completed</th>
            <th class="num">Failed</th>
            <th class="num">share of jobs</th>
          </tr>
        </thead>
        <tbody>
          {[...byType]
            .sort((a, b) => b[1].enqueued - a[1].enqueued)
            .map(([type, t]) => (
              <tr data-cost-type={type}>
                <td>{type}</td>
                <td class="num">{t.enqueued.toLocaleString("en")}</td>
                <td class="num">{t.completed.toLocaleString("en")}</td>
                <td class="num">{t.failed.toLocaleString("en")}</td>
                <td class="num">{jobs === 0 ? "–" : `${Math.round((100 * t.enqueued) / jobs)}%`}</td>
              </tr>
            ))}
        </tbody>
      </table>
      <p class="muted small">
        Counted by each object's meter from its statements' own cursors; Prometheus: <code>edgequeue_storage_rows_written_total</code>,{" "}
        <code>edgequeue_storage_setup_rows_written_total</code>. Rows are counted per object, not per type: several types share an object. At
        low volume the fixed work and setup are most of the bill (README "What it costs"). A job's deletion after retention falls in a later hour
        than its creation.
      </p>
    </>
  );
}

/**
 * BudgetBanners: a budget past its hard limit (the types it holds paused, and a Lift for an operator) or its soft one
 * in this window (docs/operating.md "Spend caps").
 */
function BudgetBanners(props: { budgets: readonly BudgetView[]; frame: PageFrame }) {
  return (
    <>
      {props.budgets
        .filter((b) => b.paused.length > 0 || (b.softCrossedAt !== null && b.windowEnd > props.frame.now))
        .map((b) =>
          b.paused.length > 0 ? (
            <div class="banner error" role="alert" data-budget={b.name}>
              Budget {b.name} crossed its hard limit ({b.spent} of {b.hard} {b.unit} this {b.window}): paused {b.paused.join(", ")} until {utc(b.windowEnd)}. New jobs
              are kept.{" "}
              {props.frame.canOperate === false ? null : (
                <form method="post" action="/dashboard/budgets/lift" class="inline">
                  <Csrf token={props.frame.csrf} />
                  <input type="hidden" name="name" value={b.name} />
                  <button type="submit" class="secondary">
                    Lift
                  </button>
                </form>
              )}
            </div>
          ) : (
            <div class="banner notice" role="status" data-budget={b.name}>
              Budget {b.name} is past its soft limit: {b.spent} {b.unit} this {b.window} (soft {b.soft}
              {b.hard !== null ? `, hard ${b.hard}` : ""}).
            </div>
          ),
        )}
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
