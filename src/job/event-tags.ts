/**
 * How a delivery job of a topic says which event it carries: two tags the
 * emit puts on it (coordinator/topics.ts), read back for `ctx.event` in the
 * consumer's handler, pushed or pulled (docs/schedules-and-events.md "Events").
 *
 * @module
 */

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
