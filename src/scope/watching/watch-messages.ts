/**
 * What a live subscription is sent (docs/http-api.md "Live subscriptions"): one JSON object per message, its
 * `event` one of `state` (a job's view, or the jobs followed as the subscription opens), `progress`, `step`, `log`
 * and `result`; and which rows each subscription follows. WebSockets are found by tag (at most 256 characters
 * each, so a job id or key is hashed into one; the subscription kept with the socket settles a hash's rare
 * collision).
 *
 * @module
 */
import type { Job } from "../../job/schemas";
import type { SubscriptionMessage, WatchedJob } from "../../job/watch-message";
import { hash64 } from "../../job/hash";
import { carries, type Subscription } from "../../job/subscription";
import { toJob, type JobRow } from "../jobs/job-row";
import type { Lens } from "../../sealing/lens";
import { TERMINAL_STATES } from "../../job/states";
import { getJob, listJobs, liveJobsOfKey } from "../jobs/read";
import { missedOf } from "./missed";

/** A scope subscription's first message lists at most this many of its live jobs (`more` says whether there are others). */
export const FIRST_JOBS_MAX = 100;
/** The tag of subscriptions that follow every job of the object. */
export const TAG_ALL = "all";

export type Message = SubscriptionMessage;

const jobTag = (id: string) => `j:${hash64(id)}`;
const keyTag = (type: string, key: string) => `k:${hash64(`${type}\u0000${key}`)}`;
const typeTag = (type: string) => `t:${hash64(type)}`;

/** watchTags: the tags a subscription's socket is accepted with. */
export function watchTags(sub: Subscription): string[] {
  if (sub.kind === "job") return [jobTag(sub.id)];
  if (sub.kind === "key") return [keyTag(sub.type, sub.key)];
  if (sub.kind === "type") return [typeTag(sub.type)];
  return [TAG_ALL];
}

/** tagsOf: the tags whose sockets may follow a row. */
export function tagsOf(row: Pick<JobRow, "id" | "type" | "dedupe_key">): string[] {
  const tags = [jobTag(row.id), typeTag(row.type), TAG_ALL];
  return row.dedupe_key === null ? tags : [...tags, keyTag(row.type, row.dedupe_key)];
}

/** follows: whether a subscription follows this row. */
export function follows(sub: Subscription, row: Pick<JobRow, "id" | "type" | "dedupe_key">): boolean {
  if (sub.kind === "job") return row.id === sub.id;
  if (sub.kind === "key") return row.type === sub.type && row.dedupe_key === sub.key;
  if (sub.kind === "type") return row.type === sub.type;
  return true;
}

/** What a subscription's messages depend on besides the row: what it carries. */
export type Carrying = Pick<Subscription, "inc">;

/** carryKey: subscriptions with the same key are sent the same text for a row. */
export function carryKey(sub: Carrying): string {
  return sub.inc === undefined ? "" : sub.inc.join(",");
}

/** watched: a job's view cut to what the subscription carries (docs/http-api.md "What a subscription carries"). */
export function watched(job: Job, sub: Carrying): WatchedJob {
  const out: WatchedJob = { ...job };
  if (!carries(sub, "payload")) delete out.payload;
  if (!carries(sub, "result")) delete out.result;
  if (!carries(sub, "progress")) {
    delete out.progress;
    delete out.progressAt;
  }
  return out;
}

/** messagesFor: a row's messages for a subscription, made only once a watcher follows it (a view parses the payload). */
export function messagesFor(row: JobRow, what: "state" | "progress", lens: Lens): (sub: Carrying) => Message[] {
  if (what === "progress") {
    return (sub) => (carries(sub, "progress") ? [{ event: "progress", id: row.id, progress: row.progress === null ? null : (lens.show(row.progress, row.type) as Job["progress"]), at: row.progress_at }] : []);
  }
  let job: Job | null = null;
  return (sub) => stateOf((job ??= shown(row, lens)), row.state === "completed", sub);
}

/** shown: a row's reader view, opened here (sealing/lens.ts openSync): a subscription's message leaves from the object itself. */
function shown(row: JobRow, lens: Lens): Job {
  return lens.openSync(toJob(row, lens), "reader");
}

/** fedTo: whether a step or log item goes to this subscription. */
export function fedTo(item: Extract<Message, { event: "step" | "log" }>, sub: Carrying): boolean {
  return carries(sub, item.event === "step" ? "steps" : "logs");
}

function stateOf(job: Job, completed: boolean, sub: Carrying): Message[] {
  const state: Message = { event: "state", job: watched(job, sub) };
  return completed && carries(sub, "result") ? [state, { event: "result", id: job.id, result: job.result }] : [state];
}

/**
 * firstMessage: the current state of what a subscription follows; null for a job that is not here. A reconnect's
 * cursor (`after`) adds what it missed since: a job's steps and lines before its state (missed.ts), or — a type's or
 * a scope's — the jobs that ended since, as `since` does.
 */
export function firstMessage(store: { sql: SqlStorage; lens: Lens }, sub: Subscription, after: number | null = null): Message[] | null {
  const { sql, lens } = store;
  if (sub.kind === "job") {
    const row = getJob(sql, sub.id);
    if (!row) return null;
    const state = stateOf(shown(row, lens), row.state === "completed", sub);
    return after === null ? state : [...missedOf(store, row, sub, after), ...state];
  }
  if (after !== null && sub.kind !== "key") sub = { ...sub, since: after };
  const view = (r: JobRow) => watched(shown(r, lens), sub);
  if (sub.kind === "key") return [{ event: "state", jobs: liveJobsOfKey(sql, sub.key).filter((r) => r.type === sub.type).map(view), more: false }];
  const types = sub.kind === "type" ? { types: [sub.type] } : {};
  const rows = listJobs(sql, { states: ["pending", "running", "waiting"], ...types }, 0, FIRST_JOBS_MAX + 1);
  const first: Message = { event: "state", jobs: rows.slice(0, FIRST_JOBS_MAX).map(view), more: rows.length > FIRST_JOBS_MAX };
  if (sub.since === undefined) return [first];
  const ended = listJobs(sql, { states: [...TERMINAL_STATES], ...types, finishedAfter: sub.since - 1 }, 0, FIRST_JOBS_MAX);
  return [{ ...first, ended: ended.map(view) }];
}
