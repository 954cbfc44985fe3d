/**
 * What a live subscription is sent (docs/http-api.md "Live subscriptions"): one JSON object per message (a
 * WebSocket text frame, or one `data:` line of Server-Sent Events), its `event` saying which. Shared by the scope
 * object that sends them (scope/watching/watch-messages.ts) and the clients that read them (client/subscribe.ts).
 *
 * @module
 */
import type { JobLogLine } from "./log-lines";
import type { Job } from "./schemas";

/**
 * A job's view as a subscription sends it: `payload`, `result`, `progress` and `progressAt` only when the
 * subscription carries them (its `include`, docs/http-api.md "What a subscription carries").
 */
export type WatchedJob = Omit<Job, "payload" | "result" | "progress" | "progressAt"> & Partial<Pick<Job, "payload" | "result" | "progress" | "progressAt">>;

export type SubscriptionMessage =
  /** A job's view after a change; the first message of a job's subscription is its view as it opens. */
  | { event: "state"; job: WatchedJob }
  /**
   * The first message of a key's, a type's or a scope's subscription: its live jobs (the first 100; `more` when there
   * are others) — and, for one minted with `since`, the jobs that ended since (`ended`, the first 100).
   */
  | { event: "state"; jobs: WatchedJob[]; more: boolean; ended?: WatchedJob[] }
  /** A ctx.progress report: the value and when the queue kept it. */
  | { event: "progress"; id: string; progress: unknown; at: number | null }
  /** A completed job's result (after its `state`). */
  | { event: "result"; id: string; result: unknown }
  /** A durable step, sleep or wait journaled (its result stays in GET /v1/jobs/{id}/steps). */
  | { event: "step"; id: string; step: { seq: number; name: string; kind: string; startedAt: number; finishedAt: number | null; attempt: number } }
  /** A ctx.log line kept with the job. */
  | { event: "log"; id: string; line: JobLogLine };
