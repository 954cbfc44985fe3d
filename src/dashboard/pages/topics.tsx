/** @jsxImportSource hono/jsx */
/**
 * Topics: each topic's consumers and its quarantine — deliveries that failed
 * maxAttempts times — with a retry per delivery.
 *
 * @module
 */
import type { DeadDelivery } from "../../job/schemas";
import { ago } from "../format";
import { Csrf, Layout, type PageFrame } from "../layout";
import { jobHref } from "./jobs";

export interface TopicView {
  topic: string;
  consumers: string[];
  dead: DeadDelivery[];
  more: boolean;
}

export function TopicsPage(props: { frame: PageFrame; topics: TopicView[] }) {
  const { frame } = props;
  return (
    <Layout {...frame}>
      <div id="topics" data-live>
        {props.topics.length === 0 ? <div class="card muted">No topics are declared in the config.</div> : null}
        {props.topics.map((t) => (
          <div class="card" data-topic={t.topic}>
            <h2>
              {t.topic} <span class="muted small">→ {t.consumers.join(", ")}</span>
            </h2>
            {t.dead.length === 0 ? (
              <p class="muted">No dead deliveries.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th>Event</th>
                    <th>Consumer</th>
                    <th class="num">Attempts</th>
                    <th>Failed</th>
                    <th>Error</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  {t.dead.map((d) => (
                    <tr>
                      <td>
                        <a href={jobHref(d.jobId)}>{d.eventId}</a>
                      </td>
                      <td>{d.consumer}</td>
                      <td class="num">{d.attempts}</td>
                      <td>{ago(d.at, frame.now)}</td>
                      <td class="wrap small">{d.error ?? ""}</td>
                      <td>
                        {/* Names travel as fields, not path segments: an event id of "." or ".." would not survive URL parsing. */}
                        {frame.canOperate === false ? null : (
                        <form method="post" action="/dashboard/topics/retry-dead" class="inline">
                          <Csrf token={frame.csrf} />
                          <input type="hidden" name="topic" value={t.topic} />
                          <input type="hidden" name="consumer" value={d.consumer} />
                          <input type="hidden" name="eventId" value={d.eventId} />
                          <button type="submit" class="secondary">
                            Retry
                          </button>
                        </form>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {t.more ? (
              <p class="small">
                {/* Per consumer, by type: a listing by tag alone would visit every object with failed jobs. */}
                all dead deliveries of {t.topic}:{" "}
                {t.consumers.map((consumer) => (
                  <a href={`/dashboard/jobs?type=${encodeURIComponent(consumer)}&state=failed&tag=${encodeURIComponent(`topic:${t.topic}`)}`}>{consumer} » </a>
                ))}
              </p>
            ) : null}
          </div>
        ))}
      </div>
    </Layout>
  );
}
