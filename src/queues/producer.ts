/**
 * Cloudflare Queues' producer, over edgequeue (docs/coming-from/cloudflare-queues.md "Sending, unchanged"): an
 * object with the binding's `send` and `sendBatch`, so code written against `env.MY_QUEUE` sends jobs of one
 * edgequeue type instead — `delaySeconds` is the job's delay, a body is its payload.
 *
 * A payload is a JSON object: a body that is one is the payload as it is; any other body the JSON-safe `v8` and
 * `json` content types carry (a string, a number, an array) is `{ "body": <it> }`, as is `text`'s string. `bytes`
 * (and a `v8` value JSON cannot hold: a Date, a Map, binary) is refused naming the message, with nothing sent.
 *
 * @module
 */
import type { EnqueueInput } from "../client/producer";
import { formatPath, isJsonObject, jsonProblem, type JsonObject } from "../job/json-safe";

/** The content types Cloudflare Queues names (workers-types' `QueueContentType`). */
export type QueueContentType = "text" | "bytes" | "json" | "v8";

export interface QueueSendOptions {
  contentType?: QueueContentType;
  delaySeconds?: number;
}

export interface MessageSendRequest<Body = unknown> {
  body: Body;
  contentType?: QueueContentType;
  delaySeconds?: number;
}

/** The client jobs are enqueued with (`createClient(env.QUEUE)`, `createHttpClient(...)`). */
export interface ProducerClient {
  enqueue(input: EnqueueInput): Promise<unknown>;
  enqueueMany(inputs: EnqueueInput[]): Promise<unknown>;
}

export interface QueueProducerOptions {
  /** The job type each message becomes. */
  type: string;
  /** Enqueue options every job gets (`maxAttempts`, `scope`, `priority`…); a message's `delaySeconds` wins over `delayMs`. */
  options?: Omit<EnqueueInput, "type" | "payload" | "id">;
}

/** The queue binding's producer half (workers-types' `Queue`). */
export interface QueueProducer<Body = unknown> {
  send(body: Body, options?: QueueSendOptions): Promise<void>;
  sendBatch(messages: Iterable<MessageSendRequest<Body>>, options?: { delaySeconds?: number }): Promise<void>;
}

const CALL_MAX = 1000;
const DELAY_MAX_SECONDS = 43_200;

/** queueProducer: `send` / `sendBatch` over an edgequeue client, each message a job of `options.type`. */
export function queueProducer<Body = unknown>(client: ProducerClient, options: QueueProducerOptions): QueueProducer<Body> {
  const jobOf = (where: string, body: unknown, contentType: QueueContentType | undefined, delaySeconds: number | undefined): EnqueueInput => {
    const payload = payloadOf(where, body, contentType);
    if (delaySeconds !== undefined && !(Number.isInteger(delaySeconds) && delaySeconds >= 0 && delaySeconds <= DELAY_MAX_SECONDS)) {
      throw new TypeError(`${where}.delaySeconds: ${String(delaySeconds)} is not a whole number of seconds from 0 to ${DELAY_MAX_SECONDS} (Cloudflare Queues' limit)`);
    }
    return { ...options.options, type: options.type, payload, ...(delaySeconds === undefined ? {} : { delayMs: delaySeconds * 1000 }) } as EnqueueInput;
  };
  return {
    async send(body, o = {}) {
      await client.enqueue(jobOf("send", body, o.contentType, o.delaySeconds));
    },
    async sendBatch(messages, o = {}) {
      // Every message is checked before any is sent: a refused one sends nothing.
      const jobs = [...messages].map((m, i) => jobOf(`sendBatch[${i}]`, m.body, m.contentType, m.delaySeconds ?? o.delaySeconds));
      for (let i = 0; i < jobs.length; i += CALL_MAX) await client.enqueueMany(jobs.slice(i, i + CALL_MAX));
    },
  };
}

/** payloadOf: a message's body as a job's payload; throws naming the message and what is wrong. */
function payloadOf(where: string, body: unknown, contentType: QueueContentType | undefined): JsonObject {
  if (contentType === "bytes") throw new TypeError(`${where}.contentType: "bytes" is not carried — an edgequeue payload is JSON; send the bytes as base64 text`);
  if (contentType === "text" && typeof body !== "string") throw new TypeError(`${where}.body: contentType "text" takes a string, got ${typeof body}`);
  const problem = jsonProblem(body);
  if (problem) {
    const at = formatPath(problem.path);
    throw new TypeError(`${where}.body${at === "" || at.startsWith("[") ? at : `.${at}`}: ${problem.problem} — an edgequeue payload is JSON`);
  }
  return contentType !== "text" && isJsonObject(body) ? body : { body: body as JsonObject[string] };
}
