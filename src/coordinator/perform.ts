/**
 * perform: one call of a declared operation, as HTTP and RPC both make it — its path parameters,
 * body and query parsed by the declaration's schemas (the path first, so a bad id is named before the
 * body is parsed), then its implementation (coordinator/implementations.ts).
 *
 * @module
 */
import { confine } from "../auth/confine";
import type { DeclaredOperation } from "../api";
import type { SuccessStatus } from "../api/operation";
import { IMPLEMENTATIONS } from "./implementations";
import type { QueueOps } from "./operations";
import { parseInput } from "./validate";
import { authorize } from "../auth/authorize";
import type { Principal } from "../auth/tokens";
import { auditDetail } from "./audit";
import { QueueError } from "../errors";

export interface RawCall {
  params: unknown;
  /** What the path's parameters are called where they came from (an RPC call's own arguments), for the refusal's paths. */
  names?: Readonly<Record<string, string>>;
  query?: unknown;
  /** Read only once the path parameters passed. */
  body: () => unknown;
}

/**
 * perform: `who` is the caller (a token's principal over HTTP; the service binding over RPC): its role and types are
 * checked once the input parsed, before anything is done (auth/authorize.ts), and an operator action that succeeded
 * is recorded in the audit list with its name (coordinator/audit.ts) before it is answered.
 */
export async function perform(op: DeclaredOperation, ops: QueueOps, raw: RawCall, who: Principal): Promise<unknown> {
  const params = op.params ? parseInput(op.params, raw.params, "params", raw.names) : raw.params;
  const body = op.body ? parseInput(op.body, await raw.body(), "body") : undefined;
  const query = op.query ? parseInput(op.query, raw.query ?? {}, "query") : undefined;
  const input = { params, body, query };
  if (op.auth) await authorize(op, who, input, lookupJob(ops, query));
  const run = IMPLEMENTATIONS[op.operationId] as (ops: QueueOps, input: unknown) => Promise<unknown>;
  // A limited token is not shown another type's job that a shared key or id answers (auth/confine.ts).
  const ran = await run(ops, input);
  const answer = op.auth ? confine(op.operationId, who, ran) : ran;
  if (op.access === "operate") {
    // Done is done: a record that could not be written is logged loudly, and the call still answers what it did.
    await ops.audit.record(who, op.operationId, auditDetail(input, answer)).catch((e: unknown) => {
      console.error(JSON.stringify({ event: "audit:record_failed", token: who.name, action: op.operationId, error: String(e) }));
    });
  }
  return answer;
}

/** lookupJob: a job's type and scope for a limited token's check, found as getJob finds it (its query may name the type or scope). */
function lookupJob(ops: QueueOps, query: unknown) {
  return async (id: string) => {
    try {
      return await ops.jobs.get(id, (query ?? {}) as Parameters<QueueOps["jobs"]["get"]>[1]);
    } catch (e) {
      if (e instanceof QueueError && e.code === "not_found") return null;
      throw e;
    }
  };
}

/** statusOf: the success status of an answer (api/operation.ts, `status`). */
export function statusOf(op: DeclaredOperation, answer: unknown): SuccessStatus {
  if (op.status === "created") return (answer as { created?: unknown }).created === true ? 201 : 200;
  return op.status ?? 200;
}
