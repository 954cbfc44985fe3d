/**
 * What the workflow capability keeps beside the core's store: a topic
 * registry's recent events in memory (event-waits.ts), and the queue's token,
 * from which wait tokens' signing key is derived (job/wait-token.ts).
 *
 * @module
 */
import type { HomeStore } from "../jobs/home-store";
import type { RecentEvents } from "./recent-events";

export interface WorkflowStore extends HomeStore {
  /** A topic registry's events of the last few minutes, in memory (event-waits.ts). */
  readonly recentEvents: RecentEvents;
  /** The queue's QUEUE_TOKEN; null when unset (no wait token can be made). */
  readonly queueToken: string | null;
}
