/**
 * Operations over many jobs at once: the jobs a filter matches cancelled or retried, every failed job of a type or scope back to pending, a scope
 * cancelled, the jobs of some dedupe keys cancelled, terminal jobs pruned (docs/http-api.md, The HTTP
 * API). The rule and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import type { z } from "zod";
import { BulkCancelSchema, BulkRerunSchema, BulkResultSchema, BulkRetrySchema } from "../job/schemas/bulk";
import { CancelKeysSchema, CancelScopeResultSchema, CancelScopeSchema, PruneResultSchema, PruneSchema, RetryFailedResultSchema, RetryFailedSchema } from "../job/schemas/changes";
import { ScopeParams, type ScopeSchema } from "../job/schemas/pieces";
import { operation } from "./operation";

export const BULK_OPERATIONS = {
  cancelJobs: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/cancel",
    summary: "Cancel every pending, running or waiting job a filter matches, across homes, a page per call (running ones are aborted with the reason, their children cancelled)",
    body: BulkCancelSchema,
    response: BulkResultSchema,
    errors: [],
  }),
  retryJobs: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/retry",
    summary: "Send every failed, cancelled, superseded or expired job a filter matches back to pending, due now, attempts 0, across homes, a page per call",
    body: BulkRetrySchema,
    response: BulkResultSchema,
    errors: [],
  }),
  rerunJobs: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/rerun",
    summary: "Rerun every finished job a filter matches (a new job each, linked both ways), from a step of its journal or the start, across homes, a page per call; jobs created after the first call are never matched",
    body: BulkRerunSchema,
    response: BulkResultSchema,
    errors: [],
  }),
  retryFailed: operation({
    access: "operate",
    method: "post",
    path: "/v1/retry",
    summary: "Send every failed job (of a type, a scope, or both) back to pending, due now, attempts 0",
    body: RetryFailedSchema,
    response: RetryFailedResultSchema,
    errors: ["not_found"],
  }),
  cancelScope: operation({
    access: "operate",
    method: "post",
    path: "/v1/scopes/{scopeType}/{scopeId}/cancel",
    summary: "Cancel every pending (and, unless pendingOnly, running) job of a scope",
    params: ScopeParams,
    body: CancelScopeSchema,
    response: CancelScopeResultSchema,
    errors: [],
    // Over RPC the scope is one argument, as everywhere else a scope is given.
    rpc: {
      input: (scope: z.input<typeof ScopeSchema>, body?: z.input<typeof CancelScopeSchema>) => ({
        params: { scopeType: (scope as Partial<typeof scope> | null)?.type, scopeId: (scope as Partial<typeof scope> | null)?.id },
        body: body ?? {},
      }),
      names: { scopeType: "type", scopeId: "id" },
    },
  }),
  cancelKeys: operation({
    access: "operate",
    method: "post",
    path: "/v1/cancel",
    summary: "Cancel the live jobs of a type under these dedupe keys (in a scope, or among the type's unscoped jobs); running ones are aborted with the reason",
    body: CancelKeysSchema,
    response: CancelScopeResultSchema,
    errors: [],
  }),
  prune: operation({
    access: "operate",
    method: "post",
    path: "/v1/prune",
    summary: "Delete terminal jobs that finished before olderThan",
    body: PruneSchema,
    response: PruneResultSchema,
    errors: [],
  }),
};
