/**
 * Pools as the API shows them: every declared pool and each type's concurrency (`type:<jobType>`),
 * read from and resized in its PoolDO (docs/guards.md; docs/design.md "Guards"). A runtime limit
 * persists; the config's stays the default.
 *
 * @module
 */
import { QueueError } from "../errors";
import { parseHome } from "../job/home";
import type { PoolLimitsRequest, PoolStatusBody } from "../job/schemas";
import type { PoolLimits, PoolStatus } from "../pool/permits";
import { resourcePoolName, typePoolName } from "../pool/pool-name";
import type { QueueContext } from "./queue-context";
import { invalidField } from "./refusals";

interface PoolTarget {
  name: string;
  object: string;
  types: string[];
  configured: PoolLimits;
}

export class Pools {
  constructor(private readonly q: QueueContext) {}

  async list(): Promise<PoolStatusBody[]> {
    return Promise.all(this.targets().map(async (t) => poolBody(t, await this.q.env.POOL.getByName(t.object).status(t.configured))));
  }

  async setLimits(name: string, limits: PoolLimitsRequest): Promise<PoolStatusBody> {
    const target = this.targets().find((t) => t.name === name);
    if (!target) throw new QueueError("not_found", `no pool named ${name}: pools are declared in the config (a type's concurrency is type:<jobType>)`);
    for (const key of ["concurrency", "ratePerMinute"] as const) {
      if (limits[key] !== undefined && target.configured[key] === null) {
        throw invalidField(key, `pool ${name} has no ${key} in the config; declare one there first (PUT only changes a limit the config sets)`);
      }
    }
    // A limit below a member's cost would stop that type for good.
    const pool = this.q.config.pools[name];
    const maxCost = Math.max(1, ...Object.values(pool?.costs ?? {}));
    const maxRateCost = Math.max(1, ...Object.values(pool?.rateCosts ?? {}));
    if (typeof limits.concurrency === "number" && limits.concurrency < maxCost) throw invalidField("concurrency", `must be at least ${maxCost}, the largest member cost`);
    if (typeof limits.ratePerMinute === "number" && limits.ratePerMinute < maxRateCost) throw invalidField("ratePerMinute", `must be at least ${maxRateCost}, the largest member rate cost`);
    return poolBody(target, await this.q.env.POOL.getByName(target.object).setLimits(limits, target.configured));
  }

  /** The pools the config declares, and each type's concurrency (named `type:<jobType>`). */
  private targets(): PoolTarget[] {
    const { config } = this.q;
    const out: PoolTarget[] = Object.values(config.pools).map((p) => ({
      name: p.name,
      object: resourcePoolName(p.name),
      types: p.types,
      configured: { concurrency: p.concurrency, ratePerMinute: p.ratePerMinute },
    }));
    for (const [type, t] of Object.entries(config.types)) {
      if (t.concurrency !== null) out.push({ name: `type:${type}`, object: typePoolName(type), types: [type], configured: { concurrency: t.concurrency, ratePerMinute: null } });
    }
    return out;
  }
}

function poolBody(t: PoolTarget, s: PoolStatus): PoolStatusBody {
  return {
    name: t.name,
    types: t.types,
    configured: t.configured,
    limits: s.limits,
    active: s.active,
    permits: s.permits,
    window: s.window,
    waiting: s.waiting.map((w) => {
      const home = parseHome(w.holder);
      return { holder: w.holder, scope: home?.kind === "scope" ? home.scope : null, type: w.type, since: w.since, reservedUntil: w.reservedUntil };
    }),
  };
}
