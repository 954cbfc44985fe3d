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
  // A subscription to a scope or a key follows every job there, not one job: that is reading, not following one's own.
  if (op.operationId === "createSubscription" && (input.body as { jobId?: string }).jobId === undefined && !roleAllows(who.role, "read")) {
    throw new QueueError("forbidden", `token "${who.name}" (role ${who.role}) may follow one job (jobId), not a scope or a key: that needs the role ${rolesFor("read").join(" or ")}`, {
      token: who.name,
      role: who.role,
      needs: rolesFor("read"),
    });
  }
  if (who.types === null && who.scopeTypes === null) return;
  keyShared(op.operationId, who, input);
  const target = (TARGETS as Record<string, (i: Input) => Target>)[op.operationId]!(input);
  await within(op.operationId, who, target, lookup);
}

async function within(operationId: string, who: Principal, target: Target, lookup: JobLookup): Promise<void> {
  if (target.kind === "free" || target.kind === "leased") return;
  if (target.kind === "unbounded") throw limited(who, `${operationId} is not limited to a type: ${target.why}`);
  if (target.kind === "job") {
    const job = await lookup(target.id);
    // No such job: a limited token is told so now — a subscription would otherwise be signed for an id a job of
    // another type may take later (a derived child's).
    if (job === null) throw new QueueError("not_found", `no job ${target.id}`);
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

/**
 * keyShared: a dedupe key is shared by every type of its scope (docs/guards.md), so what acts on a key's jobs whatever
 * their type is refused to a limited token: an inline claim (it may lease the key's job of another type) and the
 * cancelling key modes (they end the key's live jobs of every type).
 */
function keyShared(operationId: string, who: Principal, input: Input): void {
  const body = input.body as { dedupeMode?: string; jobs?: { dedupeMode?: string }[] } | undefined;
  const modes = operationId === "enqueue" ? [body?.dedupeMode] : operationId === "enqueueBatch" ? (body?.jobs ?? []).map((j) => j.dedupeMode) : [];
  if (operationId === "claimOrEnqueue") throw limited(who, "an inline claim may lease the key's job of any type");
  if (modes.some((m) => m === "cancelRunning" || m === "cancelPending")) throw limited(who, "dedupeMode cancelRunning and cancelPending end the key's jobs of every type");
}
