/**
 * Whether a token may make a call (docs/operating.md "Tokens and roles"): its role must grant the operation's kind
 * (its declaration's `access`, auth/roles.ts), and a token limited to job types or scope types may only touch
 * those (auth/targets.ts). A refusal is a 403 that names the token, its role and what the call needs; nothing has
 * been done when it is thrown.
 *
 * @module
 */
import type { DeclaredOperation } from "../api";
import { QueueError } from "../errors";
import { roleAllows, rolesFor } from "./roles";
import { TARGETS, type Target } from "./targets";
import type { Principal } from "./tokens";

/** A job's type and scope, read for a limited token's call on one job; null when there is no such job. */
export type JobLookup = (id: string) => Promise<{ type: string; scope: { type: string } | null } | null>;

type Input = { params?: unknown; body?: unknown; query?: unknown };

export async function authorize(op: DeclaredOperation, who: Principal, input: Input, lookup: JobLookup): Promise<void> {
  const access = op.access!;
  if (!roleAllows(who.role, access)) {
    const needs = rolesFor(access);
    throw new QueueError("forbidden", `token "${who.name}" (role ${who.role}) may not call ${op.operationId}: it needs the role ${needs.join(" or ")}`, {
      token: who.name,
      role: who.role,
      needs,
    });
  }
  if (who.types === null && who.scopeTypes === null) return;
  const target = (TARGETS as Record<string, (i: Input) => Target>)[op.operationId]!(input);
  await within(op.operationId, who, target, lookup);
}

async function within(operationId: string, who: Principal, target: Target, lookup: JobLookup): Promise<void> {
  if (target.kind === "free" || target.kind === "leased") return;
  if (target.kind === "unbounded") throw limited(who, `${operationId} is not limited to a type: ${target.why}`);
  if (target.kind === "job") {
    const job = await lookup(target.id);
    // No such job: the call answers 404 as for anyone (it says no more than a limited token may know).
    if (job === null) return;
    return within(operationId, who, { kind: "named", types: [job.type], scopeTypes: [job.scope?.type ?? null] }, lookup);
  }
  if (who.types !== null) {
    if (target.types === undefined) throw limited(who, `${operationId} names no job type here (give \`type\`)`);
    const outside = target.types.find((t) => !who.types!.includes(t));
    if (outside !== undefined) throw limited(who, `job type "${outside}" is not among them`);
  }
  if (who.scopeTypes !== null) {
    if (target.scopeTypes === undefined) throw limited(who, `${operationId} names no scope type here`);
    const outside = target.scopeTypes.find((s) => s === null || !who.scopeTypes!.includes(s));
    if (outside !== undefined) throw limited(who, outside === null ? "an unscoped job is outside its scope types" : `scope type "${outside}" is not among them`);
  }
}

function limited(who: Principal, why: string): QueueError {
  const to = [...(who.types ? [`job types ${who.types.join(", ")}`] : []), ...(who.scopeTypes ? [`scope types ${who.scopeTypes.join(", ")}`] : [])].join(" and ");
  return new QueueError("forbidden", `token "${who.name}" is limited to ${to}: ${why}`, {
    token: who.name,
    role: who.role,
    ...(who.types ? { types: [...who.types] } : {}),
    ...(who.scopeTypes ? { scopeTypes: [...who.scopeTypes] } : {}),
  });
}
