/**
 * How a delivery job of a topic says which event it carries: two tags the
 * emit puts on it (coordinator/topics.ts), read back for `ctx.event` in the
 * consumer's handler, pushed or pulled (docs/schedules-and-events.md "Events").
 *
 * @module
 */
import { scopeHome } from "./home";

export const TOPIC_TAG = "topic:";
export const EVENT_TAG = "event:";

export interface EventOfJob {
  id: string;
  topic: string;
}

/** eventOfTags: the event a delivery job carries, or null for a job that is not a delivery. */
export function eventOfTags(tags: readonly string[]): EventOfJob | null {
  const topic = tags.find((t) => t.startsWith(TOPIC_TAG));
  const event = tags.find((t) => t.startsWith(EVENT_TAG));
  return topic && event ? { id: event.slice(EVENT_TAG.length), topic: topic.slice(TOPIC_TAG.length) } : null;
}

/** The scope type of topics' registry objects: `scope:edgequeue.topic:<topic>` holds the topic's event waits. */
export const TOPIC_REGISTRY_SCOPE = "edgequeue.topic";

/** registryHome: the object holding a topic's event waits (scope/workflow/event-waits.ts). */
export function registryHome(topic: string): string {
  return scopeHome({ type: TOPIC_REGISTRY_SCOPE, id: topic }).name;
}
