/**
 * createHttpClient: the typed client over the HTTP API, for Node, browsers
 * and anything outside Cloudflare. The same client as createClient's over
 * another transport: the producer's calls (client/producer.ts) and every
 * operation by its operationId (client/calls.ts) — the operator's (pause,
 * timeline, logs, steps, cancel by keys, schedules, pools, topics…) among
 * them — each a request to the operation's declared method and path (src/api/).
 * `request(operationId, input)` sends an operation's HTTP input as it is; the
 * CLI is built on this client.
 *
 * @example
 * const queue = createHttpClient("https://edgequeue.example.workers.dev", process.env.QUEUE_TOKEN!);
 * await queue.enqueue({ type: "email.send", payload: { to: "a@b.c" } });
 * await queue.pauseType("email.send");
 *
 * @module
 */
import { inputOf, operationById, operationUrl, type DeclaredOperation, type OperationId, type OperationInput } from "../api";
import { callsOver, operationMethods, type QueueOperations } from "./calls";
import { QueueClientError } from "./errors";
import { producerClient, type QueueClient } from "./producer";

export interface HttpClientOptions {
  /** A fetch to use instead of the global one (tests, proxies, service bindings). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** The operator's calls: every operation by its operationId, and any by its HTTP input. */
export interface QueueOperatorClient extends QueueOperations {
  /** request: any operation of the API by its operationId, answered with its JSON body (refusals thrown as QueueClientError). */
  request<T = unknown>(operationId: OperationId, input?: OperationInput): Promise<T>;
}

export type HttpQueueClient = QueueClient & QueueOperatorClient;

export function createHttpClient(baseUrl: string, token: string, options: HttpClientOptions = {}): HttpQueueClient {
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const root = baseUrl.replace(/\/+$/, "");

  /** send: the JSON body, or the refusal thrown with its code, field details and status. */
  async function send(op: DeclaredOperation, input: OperationInput = {}): Promise<unknown> {
    const res = await doFetch(`${root}${operationUrl(op.operationId, op, input)}`, {
      method: op.method.toUpperCase(),
      headers: { authorization: `Bearer ${token}`, ...(input.body === undefined ? {} : { "content-type": "application/json" }) },
      // JSON.stringify drops undefined properties, as the RPC client does (client/json-input.ts).
      body: input.body === undefined ? undefined : JSON.stringify(input.body),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new QueueClientError("internal", `the queue answered ${res.status} with a body that is not JSON`, undefined, res.status);
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code: string; message: string; details?: unknown } })?.error;
      throw new QueueClientError(e?.code ?? "internal", e?.message ?? `HTTP ${res.status}`, e?.details, res.status);
    }
    return parsed;
  }

  const calls = callsOver((op, args) => send(op, inputOf(op, args)));
  return {
    ...operationMethods(calls),
    ...producerClient(calls),
    request: async <T>(operationId: OperationId, input?: OperationInput) => (await send(operationById(operationId), input)) as T,
  };
}
