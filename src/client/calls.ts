/**
 * Both clients' operations, derived from the declarations (src/api/; docs/design.md "Operations,
 * declared once"): a plain call per operationId over a transport — RPC (client/rpc-client.ts) or
 * HTTP (client/http-client.ts) — taking the RPC method's arguments and answering its body or throwing
 * QueueClientError; and the clients' method per operation, the plain call unless the declaration
 * shapes it (`client`).
 *
 * @module
 */
import { OPERATION_LIST, type Args, type Answer, type ClientMethod, type DeclaredOperation, type OperationId } from "../api";
import type { QueueClient } from "./producer";

/** The plain call of every operation. */
export type Calls = { [K in OperationId]: (...args: Args<K>) => Promise<Answer<K>> };

/** The clients' method of every operation, by operationId. */
export type OperationMethods = { [K in OperationId]: ClientMethod<K> };

/** The operations by operationId that the producer's calls do not already name (those keep the producer's signature). */
export interface QueueOperations extends Omit<OperationMethods, keyof QueueClient> {}

/** callsOver: every operation's plain call, made by `send` (which answers the body or throws). */
export function callsOver(send: (op: DeclaredOperation, args: unknown[]) => Promise<unknown>): Calls {
  return Object.fromEntries(OPERATION_LIST.map((op) => [op.operationId, (...args: unknown[]) => send(op, args)])) as unknown as Calls;
}

/** operationMethods: each operation's client method over the plain calls. */
export function operationMethods(calls: Calls): OperationMethods {
  return Object.fromEntries(
    OPERATION_LIST.map((op) => {
      const call = calls[op.operationId] as (...args: unknown[]) => Promise<never>;
      return [op.operationId, op.client ? op.client(call) : call];
    }),
  ) as unknown as OperationMethods;
}
