/**
 * What every area of the coordinator's operations works with: the env and config, the scope object
 * of a home, the catalog, and the home a job id names (docs/design.md "Where a job lives, and its id").
 *
 * @module
 */
import { Catalogs } from "../catalog/shards";
import type { QueueConfig } from "../config/schema";
import type { Env } from "../env";
import { homeOfJobId, typeHome } from "../job/home";
import { scopeRpc, type ScopeRpc } from "../scope/api";
import { lensOf, type Lens } from "../sealing/lens";
import { notFound } from "./refusals";
import { QueueError } from "../errors";
import { callbackUrlProblem } from "../job/callback-url";

export class QueueContext {
  constructor(
    readonly env: Env,
    readonly config: QueueConfig,
  ) {}

  /** scope: a home's object; the values its calls carry are sealed and opened here (sealing/rpc-values.ts). */
  scope(home: string): ScopeRpc {
    return scopeRpc(this.env.SCOPE.getByName(home), this.lens);
  }

  /** The env's keys and the config's sensitive types (sealing/lens.ts); a bad key secret is refused at setup. */
  get lens(): Lens {
    return lensOf(this.env, this.config);
  }

  catalog(): Catalogs {
    return new Catalogs(this.env.CATALOG, this.config.catalogShards);
  }

  /** typeHomes: the objects of a type's unscoped jobs, one per shard — read directly where the catalog may lag. */
  typeHomes(type: string): string[] {
    return Array.from({ length: this.config.typeSettings(type).shards }, (_, k) => typeHome(type, k).name);
  }

  /** homeOf routes a job id; an id that cannot name one of our objects is simply not found (and wakes no object). */
  homeOf(id: string): string {
    const home = homeOfJobId(id);
    if (!home || (home.kind === "type" && home.shard >= this.config.typeSettings(home.type).shards)) throw notFound(id);
    return home.name;
  }

  /**
   * checkCallbacks: an enqueue with a completion callback (docs/http-api.md "Completion callbacks") is refused, naming
   * the field at `path(index)`, when the queue has no EDGEQUEUE_CALLBACK_SECRET to sign it with, or when its URL points
   * where the queue does not call (job/callback-url.ts) — before anything is written.
   */
  checkCallbacks(bodies: readonly { callback?: { url: string } }[], path: (index: number) => string): void {
    bodies.forEach((b, i) => {
      if (b.callback === undefined) return;
      if (!this.env.EDGEQUEUE_CALLBACK_SECRET) {
        const message = "a callback is signed with the queue's EDGEQUEUE_CALLBACK_SECRET, and none is set (wrangler secret put EDGEQUEUE_CALLBACK_SECRET)";
        throw new QueueError("invalid_request", `${path(i)}: ${message}`, [{ path: path(i), message }]);
      }
      const problem = callbackUrlProblem(b.callback.url, this.config.callbacks.allowHosts);
      if (problem !== null) throw new QueueError("invalid_request", `${path(i)}.url ${problem}`, [{ path: `${path(i)}.url`, message: problem }]);
    });
  }
}
