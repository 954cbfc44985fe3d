/**
 * What a scope object offers the rest of the queue over RPC: the types its
 * methods take and answer — jobs as the API's views (wire.ts), never its
 * table's rows — and the few functions that go with them (a job made ready for
 * its home, a scope read from a stored pair). The coordinator and the schedule
 * object import this module and no other file of scope/ — the boundary that
 * lets the scope object's inside change (docs/design.md "One commit path");
 * `npm run check` holds it (scripts/check-cycles.mjs, BOUNDARIES).
 *
 * @module
 */
import type { ObjectMethods } from "../stubs";
import type { ScopeDO } from "./scope-do";
import { fromPrevious } from "./wire-compat";
import type { Lens } from "../sealing/lens";
import { openAnswer, sealArgs, type FailJob } from "../sealing/rpc-values";

export type { ScopeDO };

/** ScopeRpc: the scope object's methods as a caller holds them (stubs.ts ObjectMethods; answers are wire.ts's plain data). */
export type ScopeRpc = ObjectMethods<ScopeDO>;

/**
 * scopeRpc: a scope object's stub, typed as ScopeRpc; an answer from an object still running the previous
 * version (during a deploy) is read as this version's wire type (wire-compat.ts). With a lens, the values a call
 * carries are sealed on their way in and opened on their way out, here and not in the object (sealing/rpc-values.ts).
 */
export function scopeRpc(stub: DurableObjectStub<ScopeDO>, lens?: Lens): ScopeRpc {
  const target = stub as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const failJob: FailJob = (job, error) => target.fail!(job.id, job.leaseToken, { error, fatal: true }).catch(() => undefined);
  return new Proxy(target, {
    get(t, method) {
      // Not a thenable: the stub is handed around, never awaited.
      if (typeof method !== "string" || method === "then") return undefined;
      const call = (...args: unknown[]) => t[method]!(...args);
      return async (...args: unknown[]) => {
        // Without keys nothing is sealed: the calls go as they are (a value sealed under keys since removed cannot be opened anyway).
        const sealing = lens !== undefined && lens.vault.on;
        const answer = fromPrevious(method, await call(...(sealing ? await sealArgs(lens, method, args) : args)), method === "list" ? (args[2] as number) : undefined);
        return sealing ? openAnswer(lens, method, answer, failJob) : answer;
      };
    },
  }) as unknown as ScopeRpc;
}
export type { NewJob, EnqueueRefusal } from "./jobs/enqueue";
export type { Decision, Publication } from "./batches/batch-stage";
export type { EnqueueAnswer, EnqueuedJob, JobPage, WireDecidingAnswer, WireEnqueueOutcome, WireInlineClaim } from "./wire";
export type { FailedCursor } from "./jobs/change";
export type { WorkerLogItem } from "./jobs/job-logs";
export type { Outcome, Refusal } from "./jobs/outcome";
export type { HomeSummary, TypeSummary } from "./report/summary";
export { scopeOfRow } from "./jobs/job-row";
export { limitKeyFor, prepareJob } from "./jobs/new-job";
export { zeroKinds } from "./report/summary";
