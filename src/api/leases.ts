/**
 * Leases: a pull worker's claim and what it does with a leased job (heartbeat, complete, fail,
 * release), and inline claims — a caller that enqueues under a key and runs the job itself
 * (docs/pull-workers.md, docs/producers.md "Inline claims"). The rule and fields of a declaration:
 * api/operation.ts.
 *
 * @module
 */
import { JobResultSchema } from "../job/schemas/job";
import { ClaimKeyResultSchema, ClaimKeySchema, ClaimOrEnqueueResultSchema, ClaimOrEnqueueSchema, ClaimResultSchema, ClaimSchema, CompleteManyResultSchema, CompleteManySchema, CompleteSchema, FailResultSchema, FailSchema, HeartbeatResultSchema, HeartbeatSchema, ReleaseSchema } from "../job/schemas/leases";
import { JobIdParams } from "../job/schemas/pieces";
import { operation } from "./operation";

export const LEASE_OPERATIONS = {
  claim: operation({
    access: "work",
    method: "post",
    path: "/v1/claim",
    summary: "Lease due jobs for a pull worker, serving scopes fairly; `complete` first completes jobs the worker finished",
    body: ClaimSchema,
    response: ClaimResultSchema,
    errors: [],
  }),
  heartbeat: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/heartbeat",
    summary: "Extend a lease",
    params: JobIdParams,
    body: HeartbeatSchema,
    response: HeartbeatResultSchema,
    errors: ["not_found", "lease_lost", "already_terminal"],
  }),
  complete: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/complete",
    summary: "Complete a leased job with an optional result",
    params: JobIdParams,
    body: CompleteSchema,
    response: JobResultSchema,
    errors: ["not_found", "lease_lost", "already_terminal"],
  }),
  completeMany: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/complete",
    summary: "Complete 1 to 1,000 leased jobs in one call; each item is answered on its own, as its single complete would be",
    body: CompleteManySchema,
    response: CompleteManyResultSchema,
    errors: [],
  }),
  release: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/release",
    summary: "Give a leased job back unrun: pending, due now, its attempt not counted (a pending follower of its key supersedes it)",
    params: JobIdParams,
    body: ReleaseSchema,
    response: JobResultSchema,
    errors: ["not_found", "lease_lost", "already_terminal"],
  }),
  fail: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/fail",
    summary: "Fail an attempt: retry with backoff, or fail for good (fatal, or the last attempt)",
    params: JobIdParams,
    body: FailSchema,
    response: FailResultSchema,
    errors: ["not_found", "lease_lost", "already_terminal"],
  }),
  claimOrEnqueue: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/claim-or-enqueue",
    summary: "Enqueue under a key (pending mode) and, when no job of the key is running, lease it to the caller in the same transaction",
    body: ClaimOrEnqueueSchema,
    response: ClaimOrEnqueueResultSchema,
    errors: ["conflict", "queue_full"],
  }),
  claimKey: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/claim-key",
    summary: "Lease a key's pending job once none of the key is running (a caller draining its key's followers)",
    body: ClaimKeySchema,
    response: ClaimKeyResultSchema,
    errors: [],
  }),
};
