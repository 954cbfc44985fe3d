/**
 * Roles and what each may do (docs/operating.md "Tokens and roles"). An operation's declaration says which kind of
 * call it is (`access`, src/api/operation.ts); a token's role grants some kinds. Declared here once: the app's
 * check, the dashboard's buttons, the OpenAPI document and the 403's message read it.
 *
 * @module
 */

/** A token's role, from most to least. */
export const ROLES = ["admin", "operator", "producer", "worker", "reader"] as const;
export type Role = (typeof ROLES)[number];

/**
 * The kinds of call: `read` (listings, stats, a job's views), `track` (one job's view and its live subscription —
 * what a producer follows of what it enqueued), `produce` (enqueue, emit, signal), `work` (claim and settle under a
 * lease), `operate` (pause, cancel, retry, rerun, pools, schedules, bulk actions), `signal` (end a job's wait: a
 * producer's message, or an operator's approval), `audit` (the audit list), `any` (every role: the API's own
 * description).
 */
export const ACCESSES = ["read", "track", "produce", "signal", "work", "operate", "audit", "any"] as const;
export type Access = (typeof ACCESSES)[number];

/** What each role may do. */
export const ROLE_ACCESS: Record<Role, readonly Access[]> = {
  admin: ACCESSES,
  operator: ["read", "track", "signal", "operate", "audit", "any"],
  producer: ["produce", "track", "signal", "any"],
  worker: ["work", "any"],
  reader: ["read", "track", "any"],
};

/** roleAllows: whether a role may make a call of this kind. */
export function roleAllows(role: Role, access: Access): boolean {
  return ROLE_ACCESS[role].includes(access);
}

/** rolesFor: the roles that may make a call of this kind, most first (the 403's message, OpenAPI's `x-edgequeue-roles`). */
export function rolesFor(access: Access): Role[] {
  return ROLES.filter((r) => roleAllows(r, access));
}
