/**
 * Cloudflare Queues in (docs/coming-from/cloudflare-queues.md "Messages in"): a Worker's `queue(batch)` handler that
 * makes each message an edgequeue job — type and payload from a function you give, the message's id as the job's
 * id, so a redelivery finds the job it made instead of making a second — and acks a message once its job is durable
 * (the enqueue answered), retrying it otherwise. Through it, what Cloudflare sends to a queue (R2 and KV event
 * notifications, Workers and Email events) gets edgequeue's guards, steps and dashboard.
 *
 * Nothing is lost on the way: a message the mapping refuses (it throws), or whose job the queue refuses, is logged
 * with why and retried — Cloudflare's `max_retries` and dead-letter queue then hold it, as for any consumer.
 *
 * @module
 */
import type { EnqueueInput } from "../client/producer";

/** A message as Cloudflare Queues hands it to a consumer (workers-types' `Message`, only what is read here). */
export interface QueueMessageLike<Body = unknown> {
  readonly id: string;
  readonly timestamp: Date;
  readonly body: Body;
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

/** A batch as a consumer gets it (workers-types' `MessageBatch`). */
export interface MessageBatchLike<Body = unknown> {
  readonly queue: string;
  readonly messages: readonly QueueMessageLike<Body>[];
}

/** The client the jobs are enqueued with: `createClient(env.QUEUE)` or `createHttpClient(...)` from `edgequeue`. */
export interface EnqueueManyClient {
  enqueueMany(inputs: EnqueueInput[]): Promise<unknown>;
}

export interface QueueConsumerOptions<Env, Body> {
  /** The edgequeue client, from the Worker's env (a service binding to the queue, or the HTTP client). */
  client(env: Env): EnqueueManyClient;
  /**
   * map: the job a message becomes — its `type`, `payload` (a JSON object) and any enqueue option but `id` (the
   * message's id is the job's). Keep it a function of the message alone: a redelivery must map to the same job.
   * Return null to drop a message on purpose (it is acked); throw to refuse it (it is retried, then dead-lettered).
   */
  map(message: QueueMessageLike<Body>, batch: MessageBatchLike<Body>): Omit<EnqueueInput, "id"> | null;
  /** How long a refused or failed message waits before Cloudflare delivers it again (default: the queue's own). */
  retryDelaySeconds?: number;
  /** Where refusals are told (default: one JSON line on console.error, as the queue's own events are). */
  log?(event: Record<string, unknown>): void;
}

/** A consumer's enqueues: at most 1,000 jobs a call (POST /v1/jobs/batch's limit). */
const CALL_MAX = 1000;

/**
 * queueConsumer: a `queue(batch, env)` handler — `export default { queue: queueConsumer({ client, map }) }`. It
 * resolves once every message is acked or retried; it never throws, so one bad message never retries its batch.
 */
export function queueConsumer<Env, Body = unknown>(options: QueueConsumerOptions<Env, Body>): (batch: MessageBatchLike<Body>, env: Env) => Promise<void> {
  const log = options.log ?? ((event) => console.error(JSON.stringify(event)));
  const retry = (m: QueueMessageLike<Body>) => m.retry(options.retryDelaySeconds === undefined ? undefined : { delaySeconds: options.retryDelaySeconds });
  return async (batch, env) => {
    const refuse = (m: QueueMessageLike<Body>, reason: string) => {
      log({ event: "queues:message_refused", queue: batch.queue, message: m.id, attempts: m.attempts, reason });
      retry(m);
    };
    let pending: { message: QueueMessageLike<Body>; job: EnqueueInput }[] = [];
    for (const message of batch.messages) {
      let job: Omit<EnqueueInput, "id"> | null;
      try {
        job = options.map(message, batch);
      } catch (e) {
        refuse(message, `the mapping refused it: ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      if (job === null) message.ack();
      else pending.push({ message, job: { ...job, id: message.id } as EnqueueInput });
    }
    const client = options.client(env);
    while (pending.length > 0) {
      const part = pending.slice(0, CALL_MAX);
      pending = pending.slice(CALL_MAX);
      try {
        await client.enqueueMany(part.map((p) => p.job));
        // Durable, or found made already (a redelivery): either way the message is done.
        for (const p of part) p.message.ack();
      } catch (e) {
        // A refusal that names its jobs (`jobs[3].payload: …`) retries those alone and enqueues the rest again;
        // any other failure (the queue unreachable, full, misconfigured) retries the whole part.
        const named = refusedIndexes(e, part.length);
        if (named.size === 0) {
          for (const p of part) refuse(p.message, `the enqueue failed: ${String(e)}`);
          continue;
        }
        part.forEach((p, i) => (named.has(i) ? refuse(p.message, `the queue refused its job: ${String(e)}`) : pending.unshift(p)));
      }
    }
  };
}

/** refusedIndexes: the jobs an enqueue refusal names by path (`jobs[i]…` in its message or details), within the call. */
function refusedIndexes(e: unknown, n: number): Set<number> {
  const err = e as { code?: string; message?: string; details?: unknown };
  if (err?.code !== "invalid_request" && err?.code !== "payload_too_large" && err?.code !== "conflict") return new Set();
  const text = `${err.message ?? ""} ${JSON.stringify(err.details ?? null)}`;
  const out = new Set<number>();
  for (const m of text.matchAll(/jobs\[(\d+)\]/g)) {
    const i = Number(m[1]);
    if (i < n) out.add(i);
  }
  return out;
}
