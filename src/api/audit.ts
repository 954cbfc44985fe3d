/**
 * The audit list (docs/operating.md "Tokens and roles"): every operator action with the token that made it. The
 * rule and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import { AuditQuerySchema, AuditResultSchema } from "../job/schemas/audit";
import { operation } from "./operation";

export const AUDIT_OPERATIONS = {
  listAudit: operation({
    access: "audit",
    method: "get",
    path: "/v1/audit",
    summary: "The audit list: operator actions (pause, cancel, retry, rerun, pools, schedules, bulk actions, the dashboard's) with the name and role of the token that made each, newest first, kept retention.auditMs",
    query: AuditQuerySchema,
    response: AuditResultSchema,
    errors: [],
  }),
};
