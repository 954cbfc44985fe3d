/**
 * Event topics (gnldev's events, on the queue's own jobs): an event becomes
 * one delivery job per consumer declared for its topic. A delivery's id is
 * derived from the event id, so emitting the same event again creates nothing;
 * a delivery that fails `maxAttempts` times is a failed job — the topic's
 * quarantine — listed by `dead` and handed back by `retryDead`.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { QueueError } from "../errors";
import { jobIdFor, newLocalId, shardOf, typeHome } from "../job/home";
import type { DeadDelivery, DeadQuery, EmitRequest, Job } from "../job/schemas";
import { packJson, readCursor } from "./cursor";
import { EVENT_TAG, registryHome, TOPIC_TAG } from "../job/event-tags";
import type { QueueOps } from "./operations";
import { invalidField } from "./refusals";

export class Topics {
  constructor(
    private readonly ops: QueueOps,
    private readonly config: QueueConfig,
  ) {}

  private consumers(topic: string): string[] {
    const consumers = this.config.topics[topic];
    if (!consumers) throw new QueueError("not_found", `no topic ${topic} is declared in the config`);
    return consumers;
  }

  /**
   * emit: one delivery per consumer, all or none validated first; the same event id answers with the same deliveries.
   * One commit: the topic's registry (the jobs waiting for such an event: ctx.waitForEvent) decides the deliveries'
   * batch and takes the event in the deciding transaction, so an emit that fails made no delivery and ended no wait,
   * and sending it again (even without an id) duplicates nothing.
   */
  async emit(topic: string, body: EmitRequest): Promise<{ eventId: string; deliveries: string[]; waits: number }> {
    const consumers = this.consumers(topic);
    const eventId = body.id ?? newLocalId(Date.now());
    if (consumers.length === 0) return { eventId, deliveries: [], waits: await this.ops.signals.publish(topic, eventId, body.payload) };
    const { results, published } = await this.ops.jobs.enqueueDecided(
      consumers.map((type) => ({ type, payload: body.payload, id: deliveryLocalId(topic, eventId), tags: [`${TOPIC_TAG}${topic}`, `${EVENT_TAG}${eventId}`] })),
      "",
      // An event id the queue made up cannot be sent again: its deliveries leave no tombstones.
      body.id === undefined,
      "ids",
      { home: registryHome(topic), publication: { topic, eventId, payload: JSON.stringify(body.payload) } },
    );
    return { eventId, deliveries: results.map((r) => r.id), waits: published ?? 0 };
  }

  /** dead: the quarantined deliveries of a topic (failed delivery jobs), for one consumer or all. */
  async dead(topic: string, q: DeadQuery): Promise<{ items: DeadDelivery[]; nextCursor: string | null }> {
    const consumers = this.consumers(topic);
    if (q.consumer !== undefined && !consumers.includes(q.consumer)) throw invalidField("consumer", `${q.consumer} is not a consumer of ${topic}`);
    // One consumer at a time, each by its type: a listing by tag alone would page through every
    // object holding failed jobs, tenant scopes first, before reaching the consumers' own objects.
    const tag = `${TOPIC_TAG}${topic}`;
    const list = q.consumer !== undefined ? [q.consumer] : consumers;
    // The cursor says which consumer to go on with, and where inside its listing (null: from its start).
    let { at, inner } = q.cursor === undefined ? { at: 0, inner: undefined as string | undefined } : decodeDeadCursor(q.cursor, list);
    const items: DeadDelivery[] = [];
    for (; at < list.length; at++, inner = undefined) {
      const page = await this.ops.fanOut.list({ type: [list[at]!], state: ["failed"], tag, limit: q.limit - items.length, cursor: inner });
      items.push(...page.items.map(toDead));
      if (page.nextCursor !== null) return { items, nextCursor: encodeDeadCursor(list[at]!, page.nextCursor) };
      if (items.length === q.limit) return { items, nextCursor: at + 1 < list.length ? encodeDeadCursor(list[at + 1]!, null) : null };
    }
    return { items, nextCursor: null };
  }

  /** retryDead hands one quarantined delivery back: due now, attempts 0. */
  async retryDead(topic: string, consumer: string, eventId: string): Promise<Job> {
    if (!this.consumers(topic).includes(consumer)) throw new QueueError("not_found", `${consumer} is not a consumer of ${topic}`);
    const localId = deliveryLocalId(topic, eventId);
    const id = jobIdFor(typeHome(consumer, shardOf(localId, this.config.typeSettings(consumer).shards)).name, localId);
    const job = await this.ops.jobs.get(id);
    if (!job.tags.includes(`${TOPIC_TAG}${topic}`)) throw new QueueError("not_found", `no delivery of event ${eventId} to ${consumer} on ${topic}`);
    if (job.state !== "failed") throw new QueueError("conflict", `the delivery of event ${eventId} to ${consumer} is ${job.state}, not quarantined`, { state: job.state });
    return this.ops.jobs.retry(id);
  }
}

/** The dead-delivery cursor: the consumer being listed, and the job listing's cursor inside it (null: its start). */
function encodeDeadCursor(consumer: string, inner: string | null): string {
  return packJson({ c: consumer, k: inner });
}

function decodeDeadCursor(text: string, consumers: readonly string[]): { at: number; inner: string | undefined } {
  return readCursor(text, ({ c, k }) => {
    const at = typeof c === "string" ? consumers.indexOf(c) : -1;
    return at >= 0 && (k === null || typeof k === "string") ? { at, inner: k ?? undefined } : null;
  });
}

/** The same event id on two topics is two events: the topic is part of the delivery's id. */
function deliveryLocalId(topic: string, eventId: string): string {
  return `event:${topic}:${eventId}`;
}

function toDead(job: Job): DeadDelivery {
  const tag = job.tags.find((t) => t.startsWith(EVENT_TAG));
  return {
    eventId: tag ? tag.slice(EVENT_TAG.length) : job.id,
    consumer: job.type,
    attempts: job.attempts,
    error: job.lastError,
    at: job.finishedAt,
    jobId: job.id,
  };
}
