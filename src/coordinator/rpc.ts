/**
 * EdgeQueue: the same operations as the HTTP API, for Workers that bind to
 * the queue with a service binding (`entrypoint = "EdgeQueue"`). Every declared
 * operation (src/api/) is a method named by its operationId, taking the
 * arguments its declaration gives (api/operation.ts) and validated with the
 * same schemas as over HTTP (coordinator/perform.ts). Error classes do not
 * survive RPC, so every method returns the HTTP body shape tagged with `ok`:
 * `{ ok: true, ...body }` or `{ ok: false, error: { code, message, details? } }`.
 *
 * @example
 * const r = await env.QUEUE.enqueue({ type: "email.send", payload: { to: "a@b.c" } });
 * if (r.ok) console.log(r.job.id, r.created);
 *
 * @module
 */
import { SERVICE_BINDING } from "../auth/tokens";
import { WorkerEntrypoint } from "cloudflare:workers";
import { inputOf, OPERATION_LIST, type Answer, type Args, type DeclaredOperation, type OperationId } from "../api";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import type { ErrorBody, QueueError } from "../errors";
import { errorBody } from "./error-response";
import { QueueOps } from "./operations";
import { perform } from "./perform";
import { wakeSchedules } from "./schedules";

export type RpcResult<T> = ({ ok: true } & T) | ({ ok: false } & ErrorBody);

/** The entrypoint's methods: one per declared operation, its arguments and answer exact. */
export type RpcOperations = { [K in OperationId]: (...args: Args<K>) => Promise<RpcResult<Answer<K>>> };

// The methods are made from the declarations below (static block); this gives the class their types.
export interface EdgeQueue extends RpcOperations {}

export class EdgeQueue extends WorkerEntrypoint<Env> {
  /**
   * What the Worker running the queue lacks (edgequeue/server's createQueue sets it): every call answers it. An
   * instance property, not a method: every method of the prototype is callable over RPC.
   */
  protected setupProblem?: () => QueueError | null;

  static {
    // RPC calls only methods of the class's prototype chain, never instance properties (docs/design.md
    // "Operations, declared once"), so each operation is defined on the prototype, named as declared.
    for (const op of OPERATION_LIST) {
      const method = {
        async [op.operationId](this: EdgeQueue, ...args: unknown[]) {
          return this.#call(op, args);
        },
      }[op.operationId]!;
      Object.defineProperty(this.prototype, op.operationId, { value: method, writable: true, configurable: true });
    }
  }

  /** #call: private (#), so not itself callable over RPC. */
  async #call(op: DeclaredOperation, args: unknown[]): Promise<RpcResult<object>> {
    const problem = this.setupProblem?.() ?? null;
    if (problem) return { ok: false, ...problem.toBody() };
    wakeSchedules(this.env, (p) => this.ctx.waitUntil(p));
    try {
      const input = inputOf(op, args);
      const answer = await perform(op, new QueueOps(this.env, loadConfig(this.env)), { params: input.params ?? {}, names: op.rpc?.names, query: input.query, body: () => input.body }, SERVICE_BINDING);
      return { ok: true, ...(answer as object) };
    } catch (err) {
      return { ok: false, ...errorBody(err).body };
    }
  }
}
