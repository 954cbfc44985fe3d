/**
 * Pools as the API shows them: every declared pool and each type's own limits (`type:<jobType>`), read from and
 * resized in its PoolDO (docs/guards.md; docs/design.md "Guards"). A runtime limit persists; the config's stays
 * the default. A keyed limit (docs/guards.md "Keyed limits") has an object per key value; the object of its own
 * name lists the busy ones (pool/key-registry.ts), and PUT with `key` resizes one value's.
 *
 * @module
 */
import type { RateSettings } from "../config/limits";
import { QueueError } from "../errors";
import { parseHome } from "../job/home";
import type { PoolKeysBody, PoolLimitsRequest, PoolStatusBody } from "../job/schemas";
import { keyCursor } from "../pool/key-registry";
import type { PoolLimits, PoolStatus } from "../pool/permits";
import { keyedPoolName, resourcePoolName, typePoolName } from "../pool/pool-name";
import type { QueueContext } from "./queue-context";
import { invalidField } from "./refusals";

/** Key values the listing shows per keyed pool (GET /v1/pools/{name}/keys pages through the rest). */
const KEYS_LISTED = 10;

interface PoolTarget {
  name: string;
  object: string;
  types: string[];
  /** The limit's unkeyed part (all null when it has none). */
  configured: Required<PoolLimits>;
  /** Each key value's limits, and what the key is read from; null: not keyed. */
  keyed: { path: string; configured: Required<PoolLimits> } | null;
  costs: Record<string, number>;
  rateCosts: Record<string, number>;
}

const NONE: Required<PoolLimits> = { concurrency: null, ratePerMinute: null, rate: null };

export class Pools {
  constructor(private readonly q: QueueContext) {}

  async list(): Promise<PoolStatusBody[]> {
    return Promise.all(
      this.targets().map(async (t) => {
        const object = this.q.env.POOL.getByName(t.object);
        const [s, busiest] = await Promise.all([object.status(t.configured), t.keyed ? object.keys(null, KEYS_LISTED) : null]);
        return poolBody(t, s, busiest);
      }),
    );
  }

  async keys(name: string, cursor: string | null, limit: number): Promise<PoolKeysBody> {
    const target = this.target(name);
    if (!target.keyed) throw new QueueError("not_found", `pool ${name} is not keyed: it has no key values (GET /v1/pools shows it whole)`);
    if (cursor !== null && keyCursor(cursor) === null) throw invalidField("cursor", "is not a cursor this listing gave");
    return this.q.env.POOL.getByName(target.object).keys(cursor, limit);
  }

  async setLimits(name: string, limits: PoolLimitsRequest): Promise<PoolStatusBody> {
    const target = this.target(name);
    const { key, ...sizes } = limits;
    if (key === undefined && target.keyed && target.configured.concurrency === null && target.configured.ratePerMinute === null) {
      throw invalidField("key", `pool ${name} is keyed by ${target.keyed.path}: name the key value whose limit to set`);
    }
    if (key !== undefined && !target.keyed) throw invalidField("key", `pool ${name} is not keyed: leave out key`);
    const configured = key === undefined ? target.configured : target.keyed!.configured;
    for (const field of ["concurrency", "ratePerMinute"] as const) {
      if (sizes[field] !== undefined && configured[field] === null) {
        throw invalidField(field, `pool ${name} has no ${field}${key === undefined ? "" : " per key value"} in the config; declare one there first (PUT only changes a limit the config sets)`);
      }
    }
    // A limit below a member's cost would stop that type for good.
    const maxCost = Math.max(1, ...Object.values(target.costs));
    const maxRateCost = Math.max(1, ...Object.values(target.rateCosts));
    if (typeof sizes.concurrency === "number" && sizes.concurrency < maxCost) throw invalidField("concurrency", `must be at least ${maxCost}, the largest member cost`);
    if (typeof sizes.ratePerMinute === "number" && sizes.ratePerMinute < maxRateCost) throw invalidField("ratePerMinute", `must be at least ${maxRateCost}, the largest member rate cost`);
    const object = this.q.env.POOL.getByName(key === undefined ? target.object : keyedPoolName(target.object, key));
    const s = await object.setLimits(sizes, configured);
    if (key !== undefined) return poolBody({ ...target, name: `${name}#${key}`, configured, keyed: null }, s, null);
    return poolBody(target, s, target.keyed ? await this.q.env.POOL.getByName(target.object).keys(null, KEYS_LISTED) : null);
  }

  private target(name: string): PoolTarget {
    const target = this.targets().find((t) => t.name === name);
    if (!target) throw new QueueError("not_found", `no pool named ${name}: pools are declared in the config (a type's own limits are type:<jobType>)`);
    return target;
  }

  /** The pools the config declares, and each type's own limits (named `type:<jobType>`). */
  private targets(): PoolTarget[] {
    const { config } = this.q;
    const out: PoolTarget[] = Object.values(config.pools).map((p) => {
      const limits = { concurrency: p.concurrency, ratePerMinute: p.ratePerMinute, rate: p.rate };
      return {
        name: p.name,
        object: resourcePoolName(p.name),
        types: p.types,
        configured: p.key === null ? limits : NONE,
        keyed: p.key === null ? null : { path: p.key, configured: limits },
        costs: p.costs,
        rateCosts: p.rateCosts,
      };
    });
    for (const [type, t] of Object.entries(config.types)) {
      if (t.concurrency === null && t.rate === null) continue;
      const part = (keyed: boolean): Required<PoolLimits> => ({
        concurrency: t.concurrency !== null && t.concurrencyKeyed === keyed ? t.concurrency : null,
        ratePerMinute: null,
        rate: t.rate !== null && t.rateKeyed === keyed ? (t.rate as RateSettings) : null,
      });
      const keyed = part(true);
      out.push({
        name: `type:${type}`,
        object: typePoolName(type),
        types: [type],
        configured: part(false),
        keyed: keyed.concurrency === null && keyed.rate === null ? null : { path: t.limitKey!, configured: keyed },
        costs: {},
        rateCosts: {},
      });
    }
    return out;
  }
}

function poolBody(t: PoolTarget, s: PoolStatus, busiest: PoolKeysBody | null): PoolStatusBody {
  return {
    name: t.name,
    types: t.types,
    configured: t.configured,
    limits: { ...s.limits, rate: s.limits.rate ?? null },
    active: s.active,
    permits: s.permits,
    window: s.window,
    waiting: s.waiting.map((w) => {
      const home = parseHome(w.holder);
      return { holder: w.holder, scope: home?.kind === "scope" ? home.scope : null, type: w.type, since: w.since, reservedUntil: w.reservedUntil };
    }),
    keyed: t.keyed && busiest ? { path: t.keyed.path, configured: t.keyed.configured, busiest } : null,
  };
}
