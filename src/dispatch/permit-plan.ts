/**
 * The permits an attempt of a type needs before it may start, in a fixed
 * order (by pool name, so two batches never hold part of each other's set):
 *
 * - its own `concurrency` (one unit in `pool:type:<type>`);
 * - each declared pool it belongs to (its cost and rate cost there);
 * - one presence permit in the guard of every `notWhileRunning` pair it is
 *   part of — refused while the other side is live, when this side declared it.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import type { AcquireRequest } from "../pool/permits";
import { guardName, resourcePoolName, typePoolName } from "../pool/pool-name";

export interface PermitStep {
  pool: string;
  request: Omit<AcquireRequest, "holder" | "want" | "ttlMs">;
  /** For starvation warnings: what this step stands for. */
  what: string;
}

export function permitPlan(config: QueueConfig, type: string): PermitStep[] {
  const s = config.typeSettings(type);
  const steps: PermitStep[] = [];
  const base = { type, excludeTypes: [] as string[] };
  if (s.concurrency !== null) {
    steps.push({ pool: typePoolName(type), request: { ...base, cost: 1, rateCost: 0, limits: { concurrency: s.concurrency, ratePerMinute: null } }, what: `the concurrency of ${type}` });
  }
  for (const name of s.pools) {
    const p = config.pools[name]!;
    steps.push({
      pool: resourcePoolName(name),
      request: { ...base, cost: p.costs[type] ?? 1, rateCost: p.ratePerMinute === null ? 0 : (p.rateCosts[type] ?? 1), limits: { concurrency: p.concurrency, ratePerMinute: p.ratePerMinute } },
      what: `pool ${name}`,
    });
  }
  for (const other of guardPartners(config, type)) {
    const declared = s.notWhileRunning.includes(other);
    steps.push({
      pool: guardName(type, other),
      request: { ...base, cost: 1, rateCost: 0, limits: { concurrency: null, ratePerMinute: null }, excludeTypes: declared ? [other] : [] },
      what: `notWhileRunning ${other}`,
    });
  }
  return steps.sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
}

/** guardPartners: types this one shares a notWhileRunning guard with, whichever side declared it. */
function guardPartners(config: QueueConfig, type: string): string[] {
  const out = new Set(config.typeSettings(type).notWhileRunning);
  for (const other of config.pushTypes) if (config.typeSettings(other).notWhileRunning.includes(type)) out.add(other);
  out.delete(type);
  return [...out];
}
