/**
 * What a token limited to job types or scope types is shown of an answer (docs/operating.md "Tokens and roles"): a
 * scope's dedupe keys and ids are shared by all its types, so an enqueue of an allowed type may answer another
 * type's job as its duplicate, and a parent of an allowed type may have children of others. Such views are left
 * out (their ids stay: an id says no more than the caller sent).
 *
 * @module
 */
import type { Principal } from "./tokens";

type View = { type: string; scope: { type: string } | null } | null | undefined;

/** inside: whether a job's view is within the token's types and scope types. */
export function inside(who: Principal, job: NonNullable<View>): boolean {
  if (who.types !== null && !who.types.includes(job.type)) return false;
  if (who.scopeTypes !== null && (job.scope === null || !who.scopeTypes.includes(job.scope.type))) return false;
  return true;
}

const hide = <T extends { job?: View }>(who: Principal, item: T): T => (item.job && !inside(who, item.job) ? { ...item, job: null } : item);

/** confine: the answer of `operationId` with the views outside the token's reach left out. */
export function confine(operationId: string, who: Principal, answer: unknown): unknown {
  if (who.types === null && who.scopeTypes === null) return answer;
  const a = answer as Record<string, unknown>;
  switch (operationId) {
    case "enqueue":
      return hide(who, a as { job?: View });
    case "enqueueBatch":
      return { ...a, results: (a.results as { job?: View }[]).map((r) => hide(who, r)) };
    case "listChildren":
      return { ...a, children: (a.children as { job?: View }[]).map((c) => hide(who, c)) };
    default:
      return answer;
  }
}
