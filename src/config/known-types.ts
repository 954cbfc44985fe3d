/**
 * Declared job types, and what to say about a name that is not one.
 *
 * With `strictTypes = true` an enqueue, claim or schedule naming an undeclared
 * type is refused (400) with the nearest declared names, so a typo fails at
 * once instead of leaving a job that nothing will ever run. Without it (the
 * default, as in BullMQ) any name is accepted, and a type that has due jobs but
 * no binding, no declaration and no claim asking for it is flagged in stats and
 * on the dashboard instead (docs/configuration.md "Configuration").
 *
 * @module
 */
import { QueueError } from "../errors";
import type { QueueConfig } from "./schema";

/** nearestTypes: up to `n` declared names closest to `name` (edit distance within a third of its length, at least 2). */
export function nearestTypes(name: string, known: readonly string[], n = 3): string[] {
  const within = Math.max(2, Math.ceil(name.length / 3));
  return known
    .map((k) => ({ k, d: editDistance(name.toLowerCase(), k.toLowerCase()) }))
    .filter((x) => x.d <= within)
    .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k))
    .slice(0, n)
    .map((x) => x.k);
}

/** didYouMean: `; did you mean "a", "b"?` naming the nearest of `near`, or "" when there are none. */
export function didYouMean(near: readonly string[]): string {
  return near.length > 0 ? `; did you mean ${near.map((t) => JSON.stringify(t)).join(", ")}?` : "";
}

/** undeclaredMessage: what a person needs to fix an undeclared type name. */
function undeclaredMessage(type: string, config: QueueConfig): string {
  const near = nearestTypes(type, Object.keys(config.types));
  const hint = didYouMean(near) || `; declare it under [vars.EDGEQUEUE_CONFIG.types."${type}"]`;
  return `job type ${JSON.stringify(type)} is not declared in the config (strictTypes is on)${hint}`;
}

/** requireDeclared: under strictTypes, refuse each undeclared type, naming its field (`path(i)`). */
export function requireDeclared(config: QueueConfig, types: readonly string[], path: (i: number) => string): void {
  if (!config.strictTypes) return;
  const problems = types.flatMap((t, i) => (Object.hasOwn(config.types, t) ? [] : [{ path: path(i), message: undeclaredMessage(t, config) }]));
  if (problems.length > 0) throw new QueueError("invalid_request", problems.map((p) => `${p.path}: ${p.message}`).join("; "), problems);
}

/**
 * requireKnown: an operator's action on a type (pause, resume, retry) names one the queue knows — declared, or
 * seen by the catalog (it has or had jobs, or was paused) — else 404 with the nearest names, so a typo is not
 * answered 200 and kept (docs/http-api.md "Pausing a type").
 */
export function requireKnown(type: string, known: readonly string[], field: string): void {
  if (known.includes(type)) return;
  const near = nearestTypes(type, known);
  throw new QueueError("not_found", `${field}: job type ${JSON.stringify(type)} is neither declared in the config nor seen by the queue${didYouMean(near)}`, { path: field, type, suggestions: near });
}

/** Levenshtein distance (two rows): type names are short. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
