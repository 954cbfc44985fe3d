/**
 * perform: one call of a declared operation, as HTTP and RPC both make it — its path parameters,
 * body and query parsed by the declaration's schemas (the path first, so a bad id is named before the
 * body is parsed), then its implementation (coordinator/implementations.ts).
 *
 * @module
 */
import type { DeclaredOperation } from "../api";
import type { SuccessStatus } from "../api/operation";
import { IMPLEMENTATIONS } from "./implementations";
import type { QueueOps } from "./operations";
import { parseInput } from "./validate";

export interface RawCall {
  params: unknown;
  /** What the path's parameters are called where they came from (an RPC call's own arguments), for the refusal's paths. */
  names?: Readonly<Record<string, string>>;
  query?: unknown;
  /** Read only once the path parameters passed. */
  body: () => unknown;
}

export async function perform(op: DeclaredOperation, ops: QueueOps, raw: RawCall): Promise<unknown> {
  const params = op.params ? parseInput(op.params, raw.params, "params", raw.names) : raw.params;
  const body = op.body ? parseInput(op.body, await raw.body(), "body") : undefined;
  const query = op.query ? parseInput(op.query, raw.query ?? {}, "query") : undefined;
  const run = IMPLEMENTATIONS[op.operationId] as (ops: QueueOps, input: unknown) => Promise<unknown>;
  return run(ops, { params, body, query });
}

/** statusOf: the success status of an answer (api/operation.ts, `status`). */
export function statusOf(op: DeclaredOperation, answer: unknown): SuccessStatus {
  if (op.status === "created") return (answer as { created?: unknown }).created === true ? 201 : 200;
  return op.status ?? 200;
}
