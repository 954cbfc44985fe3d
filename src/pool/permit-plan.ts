/**
 * The permits an attempt of a type needs before it may start, in a fixed
 * order (by pool name, so two batches never hold part of each other's set):
 *
 * - its own `concurrency` and `rate` (one unit in `pool:type:<type>`; a keyed
 *   one in the object of the job's key value, `pool:type:<type>#<key>`);
 * - each declared pool it belongs to (its cost and rate cost there; a keyed
 *   pool's object of the key value);
 * - one presence permit in the guard of every `notWhileRunning` pair it is
 *   part of — refused while the other side is live, when this side declared it.
 *
 * Pushed and pulled types take them the same way (takePermits): the
 * dispatcher before a handler call, a pull claim before it leases
 * (scope/pull/pull-permits.ts).
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { withTimeout } from "../deadlines";
import type { AcquireRequest, BlockedBy } from "./permits";
import { guardName, keyedPoolName, resourcePoolName, typePoolName } from "./pool-name";

/**
 * Permits live twice as long as the job lease they go with: if renewals stall,
 * the job's lease lapses (and its attempt is recovered) before its slot can be
 * handed to someone else.
 */
export const PERMIT_TTL_FACTOR = 2;
/** A pool call that takes longer is given up (the type backs off): a stuck pool must not stall the object. */
export const POOL_CALL_TIMEOUT_MS = 10_000;

export interface PoolApi {
  acquire(req: AcquireRequest): Promise<{ permits: string[]; retryAfterMs: number; blockedBy: BlockedBy | null }>;
  renew(ids: string[], ttlMs: number): Promise<string[]>;
  release(ids: string[], refund?: boolean): Promise<void>;
  dropStale?(holder: string, epoch: string): Promise<void>;
}

/** Permits held in one pool, one per job, in job order. */
export interface Held {
  pool: string;
  ids: string[];
}

/** A refusal names the pool that refused: its poke, when a slot frees, is for what it refused (dispatch/key-turns.ts). */
export type Taken = { ok: true; held: Held[]; count: number } | { ok: false; retryAfterMs: number; why: string; pool: string };

export interface PermitStep {
  pool: string;
  request: Omit<AcquireRequest, "holder" | "want" | "ttlMs">;
  /** For starvation warnings: what this step stands for. */
  what: string;
}

/**
 * permitPlan: the steps for jobs of `type` under `key` — the key value of the jobs (docs/guards.md "Keyed limits";
 * null: an unkeyed type; a job of a keyed type without one, enqueued before the key was configured, counts under "").
 */
export function permitPlan(config: QueueConfig, type: string, key: string | null = null): PermitStep[] {
  const s = config.typeSettings(type);
  const steps: PermitStep[] = [];
  const base = { type, excludeTypes: [] as string[] };
  const keyed = (pool: string) => keyedPoolName(pool, key ?? "");
  const own = (keyedNow: boolean) => ({
    concurrency: s.concurrency !== null && s.concurrencyKeyed === keyedNow ? s.concurrency : null,
    ratePerMinute: null,
    rate: s.rate !== null && s.rateKeyed === keyedNow ? s.rate : null,
  });
  // The type's own limits: the unkeyed ones in its object, the keyed ones in the key value's.
  for (const keyedNow of [false, true]) {
    const limits = own(keyedNow);
    if (limits.concurrency === null && limits.rate === null) continue;
    const what = `${limits.concurrency !== null ? "the concurrency" : "the rate"} of ${type}${keyedNow ? ` for key ${JSON.stringify(key ?? "")}` : ""}`;
    steps.push({ pool: keyedNow ? keyed(typePoolName(type)) : typePoolName(type), request: { ...base, cost: 1, rateCost: limits.rate === null ? 0 : 1, limits }, what });
  }
  for (const name of s.pools) {
    const p = config.pools[name]!;
    const rated = p.ratePerMinute !== null || p.rate !== null;
    steps.push({
      pool: p.key === null ? resourcePoolName(name) : keyed(resourcePoolName(name)),
      request: { ...base, cost: p.costs[type] ?? 1, rateCost: rated ? (p.rateCosts[type] ?? 1) : 0, limits: { concurrency: p.concurrency, ratePerMinute: p.ratePerMinute, rate: p.rate } },
      what: `pool ${name}${p.key === null ? "" : ` for key ${JSON.stringify(key ?? "")}`}`,
    });
  }
  for (const other of guardPartners(config, type)) {
    const declared = s.notWhileRunning.includes(other);
    steps.push({
      pool: guardName(type, other),
      request: { ...base, cost: 1, rateCost: 0, limits: { concurrency: null, ratePerMinute: null, rate: null }, excludeTypes: declared ? [other] : [] },
      what: `notWhileRunning ${other}`,
    });
  }
  return steps.sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
}

/**
 * perKeyJobs: how many jobs of a keyed type one key value can run at once under the configured keyed concurrency
 * limits (its own and its keyed pools', at their costs), or null when no keyed limit counts running jobs (a keyed
 * rate alone). A take asks each value for no more than this (pool/keyed-take.ts), so one value's deep backlog does
 * not fill a batch's whole ask and leave the other values unasked. A limit set at runtime (PUT /v1/pools) may differ:
 * the pool's grant is what holds.
 */
export function perKeyJobs(config: QueueConfig, type: string): number | null {
  const s = config.typeSettings(type);
  const caps: number[] = [];
  if (s.concurrency !== null && s.concurrencyKeyed) caps.push(s.concurrency);
  for (const name of s.pools) {
    const p = config.pools[name]!;
    if (p.key !== null && p.concurrency !== null) caps.push(Math.floor(p.concurrency / (p.costs[type] ?? 1)));
  }
  return caps.length === 0 ? null : Math.max(1, Math.min(...caps));
}

/** guardPartners: types this one shares a notWhileRunning guard with, whichever side declared it (pushed or pulled). */
function guardPartners(config: QueueConfig, type: string): string[] {
  const out = new Set(config.typeSettings(type).notWhileRunning);
  for (const other of Object.keys(config.types)) if (config.typeSettings(other).notWhileRunning.includes(type)) out.add(other);
  out.delete(type);
  return [...out];
}

/** keyedBases: the object names of the keyed limits a type is under (each key value's object is `<name>#<value>`). */
export function keyedBases(config: QueueConfig, type: string): string[] {
  const s = config.typeSettings(type);
  const out: string[] = [];
  if ((s.concurrency !== null && s.concurrencyKeyed) || (s.rate !== null && s.rateKeyed)) out.push(typePoolName(type));
  for (const name of s.pools) if (config.pools[name]!.key !== null) out.push(resourcePoolName(name));
  return out;
}

/** guarded: attempts of the type must take permits before they start. */
export function guarded(config: QueueConfig, type: string): boolean {
  return permitPlan(config, type).length > 0;
}

/**
 * takePermits: every permit of the plan for up to `want` jobs, step by step in
 * plan order, trimmed to the smallest grant. A refused step gives back what
 * the earlier ones granted (`giveBack`, refunded: nothing started) and says
 * what refused and when to ask again.
 */
export async function takePermits(
  plan: readonly PermitStep[],
  ask: { holder: string; want: number; ttlMs: number; epoch?: string },
  pool: (name: string) => PoolApi,
  giveBack: (pool: string, ids: string[]) => void,
): Promise<Taken> {
  let want = ask.want;
  const held: Held[] = [];
  for (const step of plan) {
    let grant: { permits: string[]; retryAfterMs: number; blockedBy: BlockedBy | null };
    try {
      grant = await withTimeout(pool(step.pool).acquire({ ...step.request, holder: ask.holder, want, ttlMs: ask.ttlMs, epoch: ask.epoch ?? null }), POOL_CALL_TIMEOUT_MS);
    } catch (e) {
      console.error(JSON.stringify({ event: "pool:acquire_failed", pool: step.pool, error: String(e) }));
      grant = { permits: [], retryAfterMs: 1_000, blockedBy: null };
    }
    if (grant.permits.length === 0) {
      for (const h of held) giveBack(h.pool, h.ids);
      return { ok: false, retryAfterMs: grant.retryAfterMs, why: blockerText(step.what, grant.blockedBy), pool: step.pool };
    }
    if (grant.permits.length < want) {
      want = grant.permits.length;
      for (const h of held) {
        giveBack(h.pool, h.ids.slice(want));
        h.ids = h.ids.slice(0, want);
      }
    }
    held.push({ pool: step.pool, ids: grant.permits.slice(0, want) });
  }
  return { ok: true, held, count: want };
}

function blockerText(what: string, by: BlockedBy | null): string {
  if (by === null) return `${what}: the pool did not answer`;
  if (by === "concurrency") return `${what} is full`;
  if (by === "rate") return `${what}: the rate budget of this minute is spent`;
  return `${what}: ${by.type} is running`;
}
