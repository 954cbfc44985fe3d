/** @jsxImportSource hono/jsx */
/**
 * Schedules: when each runs next and last fired, the time zone its cron is
 * read in, and pause/resume for those made over the API (config schedules
 * change in the config only).
 *
 * @module
 */
import type { Schedule } from "../../job/schedule-spec";
import { ago, duration, utc } from "../format";
import { Csrf, Layout, type PageFrame } from "../layout";

export function SchedulesPage(props: { frame: PageFrame; items: Schedule[] }) {
  const { frame } = props;
  return (
    <Layout {...frame}>
      <div class="card" id="schedules" data-live>
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>When</th>
              <th>Time zone</th>
              <th>Next run</th>
              <th>Last fire</th>
              <th>Source</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {props.items.length === 0 ? (
              <tr>
                <td colspan={8} class="muted">
                  No schedules.
                </td>
              </tr>
            ) : (
              props.items.map((s) => (
                <tr data-schedule={s.name}>
                  <td>{s.name}</td>
                  <td>
                    <a href={`/dashboard/jobs?type=${encodeURIComponent(s.type)}`}>{s.type}</a>
                  </td>
                  <td>
                    <code>{s.cron ?? (s.everyMs !== null ? `every ${duration(s.everyMs)}` : `at ${utc(s.at)}`)}</code>
                    <span class="muted small"> misfire {s.misfire}</span>
                  </td>
                  {/* A cron's wall clock: 0 3 * * * in Europe/Berlin is not 03:00 UTC. */}
                  <td data-tz>{s.tz || "UTC"}</td>
                  <td>{s.paused ? <span class="chip">paused</span> : <span title={s.nextRunAtLocal ?? utc(s.nextRunAt)}>{ago(s.nextRunAt, frame.now)}</span>}</td>
                  <td title={utc(s.lastFiredAt)}>{ago(s.lastFiredAt, frame.now)}</td>
                  <td>{s.source}</td>
                  <td>
                    {frame.canOperate === false ? null : s.source === "api" ? (
                      <form method="post" action={`/dashboard/schedules/${s.paused ? "resume" : "pause"}`} class="inline">
                        <Csrf token={frame.csrf} />
                        <input type="hidden" name="name" value={s.name} />
                        <button type="submit" class="secondary">
                          {s.paused ? "Resume" : "Pause"}
                        </button>
                      </form>
                    ) : (
                      <span class="muted small">change in config</span>
                    )}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </Layout>
  );
}
