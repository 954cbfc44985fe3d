/**
 * createClient: the typed client over the queue's RPC entrypoint, for Workers
 * that bind to it (`[[services]] binding = "QUEUE", service = "edgequeue",
 * entrypoint = "EdgeQueue"`). The producer's calls (client/producer.ts) and
 * every operation by its operationId (client/calls.ts), each an RPC call of the
 * method of that name. Refusals are thrown as QueueClientError with the API's
 * code.
 *
 * @example
 * const queue = createClient(env.QUEUE);
 * const { job } = await queue.enqueue({ type: "email.send", payload: { to: "a@b.c" }, delayMs: 60_000 });
 *
 * @module
 */
import type { DeclaredOperation } from "../api";
import { callsOver, operationMethods, type QueueOperations } from "./calls";
import { QueueClientError } from "./errors";
import { withoutUndefined } from "./json-input";
import { producerClient, type QueueClient } from "./producer";

/** What createClient answers: the producer's calls and every other operation. */
export type RpcQueueClient = QueueClient & QueueOperations;

/** What the client needs of the binding: the EdgeQueue entrypoint's methods (typed loosely so any stub type fits). */
export interface QueueBinding {
  claimOrEnqueue?(body: unknown): Promise<unknown>;
  claimKey?(body: unknown): Promise<unknown>;
  heartbeat?(id: string, body: unknown): Promise<unknown>;
  complete?(id: string, body: unknown): Promise<unknown>;
  fail?(id: string, body: unknown): Promise<unknown>;
  enqueue(body: unknown): Promise<unknown>;
  enqueueBatch(body: unknown): Promise<unknown>;
  getJob(id: string): Promise<unknown>;
  cancelJob(id: string, body?: unknown): Promise<unknown>;
  listJobs(query?: unknown): Promise<unknown>;
  stats(query?: unknown): Promise<unknown>;
  metrics(query?: unknown): Promise<unknown>;
  retryFailed(body?: unknown): Promise<unknown>;
}

/**
 * Any service binding: `QUEUE: Service` (or `Fetcher`) in a producer's Env.
 * Its type lists only `fetch`, but the RPC methods are there at run time when
 * the binding names `entrypoint = "EdgeQueue"` — so the client takes it as it
 * is, without the producer importing the queue's own classes.
 */
export interface ServiceBindingLike {
  fetch(input: any, init?: any): Promise<unknown>;
}

type RpcAnswer = { ok: true } & Record<string, unknown>;

/** unwrap: the answer's body without its `ok` tag — unless the body has an `ok` of its own (health's). */
function unwrap(op: DeclaredOperation, answer: unknown): unknown {
  const a = answer as { ok: boolean; error?: { code: string; message: string; details?: unknown } };
  if (a && a.ok === true) {
    if (Object.hasOwn((op.response as { shape?: object }).shape ?? {}, "ok")) return answer;
    const { ok: _ok, ...body } = answer as RpcAnswer;
    return body;
  }
  const e = a?.error ?? { code: "internal", message: "malformed answer from the queue" };
  throw new QueueClientError(e.code, e.message, e.details);
}

export function createClient(service: QueueBinding | ServiceBindingLike): RpcQueueClient {
  // Arguments go as JSON would carry them: undefined properties dropped (client/json-input.ts).
  const calls = callsOver(async (op, args) => unwrap(op, await rpc(service, op.operationId, args.map(withoutUndefined))));
  return { ...operationMethods(calls), ...producerClient(calls) };
}

/**
 * rpc: call one method of the binding. A binding to the queue's default entrypoint (no
 * `entrypoint = "EdgeQueue"`) has no RPC methods; say how to fix it rather than pass on the
 * runtime's "does not implement the method".
 */
async function rpc(binding: QueueBinding | ServiceBindingLike, method: string, args: unknown[]): Promise<unknown> {
  try {
    // Called as a method of the binding (an RPC stub), never detached from it.
    return await (binding as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
  } catch (e) {
    if (/does not implement|is not a function|WorkerEntrypoint` for RPC/i.test(String(e))) {
      throw new QueueClientError("internal", `the queue binding has no RPC method ${method}: bind the queue with entrypoint = "EdgeQueue" in [[services]] (${String(e)})`);
    }
    throw e;
  }
}
