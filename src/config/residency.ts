/**
 * Data residency's settings (docs/operating.md "Data residency"): which jurisdiction a scope's jobs live in — its
 * scope type's own, else the queue's. The routing of the objects themselves is src/residency.ts; this module has no
 * Workers types, so the config, the CLI and the clients can read it.
 *
 * @module
 */
import type { QueueConfig } from "./schema";

export const JURISDICTIONS = ["eu", "fedramp"] as const;
export type Jurisdiction = (typeof JURISDICTIONS)[number];

/** jurisdictionOfScope: where a job of this scope (null: unscoped) lives. */
export function jurisdictionOfScope(config: Pick<QueueConfig, "residency">, scope: { type: string } | null | undefined): Jurisdiction | null {
  return (scope ? config.residency.scopeTypes[scope.type] : undefined) ?? config.residency.jurisdiction;
}

export const describeJurisdiction = (j: Jurisdiction | null) => (j === null ? "no jurisdiction" : `the ${j} jurisdiction`);

