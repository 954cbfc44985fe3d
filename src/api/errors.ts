/**
 * Error groups (docs/operating.md "Error groups"): attempts that ended in an error, grouped per type by a fingerprint
 * of the error, counted over the last hour and day; a group's failed jobs retried, or its jobs rerun. The rule and
 * fields of a declaration: api/operation.ts.
 *
 * @module
 */
import { ErrorGroupActionResultSchema, ErrorGroupActionSchema, ErrorsQuerySchema, ErrorsResultSchema } from "../job/schemas/errors";
import { operation } from "./operation";

export const ERROR_OPERATIONS = {
  listErrors: operation({
    access: "read",
    method: "get",
    path: "/v1/errors",
    summary: "Error groups: attempts that ended in an error, grouped per type by their kind, masked message and first frame, with counts over the last hour and day and the first and last job",
    query: ErrorsQuerySchema,
    response: ErrorsResultSchema,
    errors: [],
  }),
  retryErrorGroup: operation({
    access: "operate",
    method: "post",
    path: "/v1/errors/retry",
    summary: "Send a group's newest failed jobs back to pending, due now, attempts 0 (each as POST /v1/jobs/{id}/retry)",
    body: ErrorGroupActionSchema,
    response: ErrorGroupActionResultSchema,
    errors: ["not_found"],
  }),
  rerunErrorGroup: operation({
    access: "operate",
    method: "post",
    path: "/v1/errors/rerun",
    summary: "Rerun a group's newest jobs that failed for good from their start, each as a new job (as POST /v1/jobs/{id}/rerun)",
    body: ErrorGroupActionSchema,
    response: ErrorGroupActionResultSchema,
    errors: ["not_found"],
  }),
};
