/**
 * The metrics answer in Prometheus text exposition format (0.0.4), for
 * `GET /v1/metrics` with `Accept: text/plain`. Counters are the catalog's
 * totals (they only grow, so `rate()` works); depths and lag are gauges.
 * The per-minute series stays JSON-only: Prometheus keeps its own history.
 *
 * @module
 */
import { FAILURE_KINDS } from "../job/states";
import { COUNTER_HELP, COUNTERS } from "./counters";
import type { Metrics } from "./schemas";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const GAUGE_STATES = ["pending", "scheduled", "running", "waiting", "completed", "cancelled", "superseded", "expired"] as const;

/** wantsPrometheus: the client asked for text (as Prometheus' scraper does) rather than JSON. */
export function wantsPrometheus(accept: string | undefined): boolean {
  if (!accept) return false;
  const text = accept.indexOf("text/plain");
  const json = accept.indexOf("application/json");
  return text >= 0 && (json < 0 || text < json);
}

export function renderPrometheus(m: Metrics): string {
  const out: string[] = [];
  const family = (name: string, kind: "counter" | "gauge", help: string, samples: string[]) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${kind}`, ...samples);
  };
  for (const c of COUNTERS) {
    family(`edgequeue_jobs_${c}_total`, "counter", `Counts ${COUNTER_HELP[c]}, per type, since the catalog began.`, m.types.map((t) => `edgequeue_jobs_${c}_total{type="${label(t.type)}"} ${t.totals[c]}`));
  }
  family(
    "edgequeue_jobs",
    "gauge",
    "Jobs by type and state (pending = due now; scheduled = pending with a future runAt), as of the objects' latest summaries.",
    m.types.flatMap((t) => GAUGE_STATES.map((s) => `edgequeue_jobs{type="${label(t.type)}",state="${s}"} ${t[s]}`)),
  );
  family(
    "edgequeue_jobs_failed",
    "gauge",
    "Failed jobs kept (not yet past retention or pruned), by type and failure kind.",
    m.types.flatMap((t) => FAILURE_KINDS.map((k) => `edgequeue_jobs_failed{type="${label(t.type)}",kind="${k}"} ${t.failedByKind[k]}`)),
  );
  family(
    "edgequeue_oldest_pending_lag_seconds",
    "gauge",
    "How long the oldest due pending job of the type has waited: the figure to alert on.",
    m.types.map((t) => `edgequeue_oldest_pending_lag_seconds{type="${label(t.type)}"} ${t.oldestPendingLagMs / 1000}`),
  );
  const usage = (name: string, help: string, value: (u: Metrics["objects"][number]) => number) =>
    family(name, "counter", help, m.objects.map((u) => `${name}{object="${u.object}"} ${value(u)}`));
  usage("edgequeue_storage_rows_written_total", "SQLite rows written by the queue's Durable Objects, per object kind (billed per million).", (u) => u.rowsWritten);
  usage("edgequeue_storage_rows_read_total", "SQLite rows read by the queue's Durable Objects, per object kind (billed per million).", (u) => u.rowsRead);
  usage("edgequeue_storage_setup_rows_written_total", "Of the rows written, those of new objects' schema migrations (a new tenant's setup), per object kind.", (u) => u.setupRowsWritten);
  usage("edgequeue_storage_setup_rows_read_total", "Of the rows read, those of new objects' schema migrations, per object kind.", (u) => u.setupRowsRead);
  usage("edgequeue_object_requests_total", "Requests to the queue's Durable Objects (RPC calls, fetches, alarms), per object kind.", (u) => u.requests);
  usage("edgequeue_object_active_seconds_total", "Wall time the queue's Durable Objects spent with a request in progress, per object kind.", (u) => u.activeMs / 1000);
  return out.join("\n") + "\n";
}

/** label escapes a label value as the format requires: backslash, double quote, newline. */
function label(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
