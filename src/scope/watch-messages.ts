/**
 * What a live subscription is sent (docs/http-api.md "Live subscriptions"): one JSON object per message, its
 * `event` one of `state` (a job's view, or the jobs followed as the subscription opens), `progress`, `step`, `log`
 * and `result`; and which rows each subscription follows. WebSockets are found by tag (at most 256 characters
 * each, so a job id or key is hashed into one; the subscription kept with the socket settles a hash's rare
 * collision).
 *
 * @module
 */
import type { SubscriptionMessage } from "../job/watch-message";
import { hash64 } from "../job/hash";
import type { Subscription } from "../job/subscription";
import { toJob, type JobRow } from "./job-row";
import { getJob, listJobs, liveJobsOfKey } from "./read";

/** A scope subscription's first message lists at most this many of its live jobs (`more` says whether there are others). */
export const FIRST_JOBS_MAX = 100;
/** The tag of subscriptions that follow every job of the object. */
export const TAG_ALL = "all";

export type Message = SubscriptionMessage;

const jobTag = (id: string) => `j:${hash64(id)}`;
const keyTag = (type: string, key: string) => `k:${hash64(`${type}\u0000${key}`)}`;

/** watchTags: the tags a subscription's socket is accepted with. */
export function watchTags(sub: Subscription): string[] {
  if (sub.kind === "job") return [jobTag(sub.id)];
  if (sub.kind === "key") return [keyTag(sub.type, sub.key)];
  return [TAG_ALL];
}

/** tagsOf: the tags whose sockets may follow a row. */
export function tagsOf(row: Pick<JobRow, "id" | "type" | "dedupe_key">): string[] {
  return row.dedupe_key === null ? [jobTag(row.id), TAG_ALL] : [jobTag(row.id), keyTag(row.type, row.dedupe_key), TAG_ALL];
}

/** follows: whether a subscription follows this row. */
export function follows(sub: Subscription, row: Pick<JobRow, "id" | "type" | "dedupe_key">): boolean {
  if (sub.kind === "job") return row.id === sub.id;
  if (sub.kind === "key") return row.type === sub.type && row.dedupe_key === sub.key;
  return true;
}

/** messagesFor: a row's messages, made only once a watcher follows it (a view parses the payload). */
export function messagesFor(row: JobRow, what: "state" | "progress"): () => Message[] {
  if (what === "progress") return () => [{ event: "progress", id: row.id, progress: row.progress === null ? null : JSON.parse(row.progress), at: row.progress_at }];
  return () => stateOf(row);
}

function stateOf(row: JobRow): Message[] {
  const job = toJob(row);
  return row.state === "completed" ? [{ event: "state", job }, { event: "result", id: job.id, result: job.result }] : [{ event: "state", job }];
}

/** firstMessage: the current state of what a subscription follows; null for a job that is not here. */
export function firstMessage(sql: SqlStorage, sub: Subscription): Message[] | null {
  if (sub.kind === "job") {
    const row = getJob(sql, sub.id);
    return row ? stateOf(row) : null;
  }
  if (sub.kind === "key") return [{ event: "state", jobs: liveJobsOfKey(sql, sub.key).filter((r) => r.type === sub.type).map(toJob), more: false }];
  const rows = listJobs(sql, { states: ["pending", "running", "waiting"] }, 0, FIRST_JOBS_MAX + 1);
  return [{ event: "state", jobs: rows.slice(0, FIRST_JOBS_MAX).map(toJob), more: rows.length > FIRST_JOBS_MAX }];
}
