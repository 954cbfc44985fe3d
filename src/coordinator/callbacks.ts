/**
 * Dead completion callbacks across objects (docs/http-api.md "Completion callbacks"): a scope's own object when the
 * query names one; else the type's own shards, then the objects the catalog lists with ended jobs (of the type, if
 * given), at most HOMES_PER_CALL per call, with a cursor where the next call goes on. No SQL here.
 *
 * @module
 */
import { scopeHome } from "../job/home";
import type { DeadCallbacks, DeadCallbacksQuery } from "../job/schemas/callbacks";
import { TERMINAL_STATES } from "../job/states";
import { decodeCursor, encodeCursor, invalidCursor } from "./cursor";
import type { QueueContext } from "./queue-context";

const HOMES_PER_CALL = 20;

export class Callbacks {
  constructor(private readonly q: QueueContext) {}

  async dead(query: DeadCallbacksQuery): Promise<DeadCallbacks> {
    if (query.scopeType !== undefined && query.scopeId !== undefined) {
      return { items: await this.q.scope(scopeHome({ type: query.scopeType, id: query.scopeId }).name).deadCallbacks(query.limit), nextCursor: null };
    }
    const cursor = query.cursor ? decodeCursor(query.cursor) : { h: "", s: -1 };
    const direct = query.type === undefined ? [] : this.q.typeHomes(query.type);
    const inCatalog = cursor.c === 1 || (cursor.h !== "" && !direct.includes(cursor.h));
    if (cursor.h !== "" && !inCatalog && !direct.includes(cursor.h)) throw invalidCursor();
    const homes = inCatalog ? [] : direct.slice(cursor.h === "" ? 0 : direct.indexOf(cursor.h) + 1);
    if (homes.length > HOMES_PER_CALL) {
      const page = homes.slice(0, HOMES_PER_CALL);
      return { items: await this.from(page, query.limit), nextCursor: encodeCursor({ h: page.at(-1)!, s: -1 }) };
    }
    const budget = HOMES_PER_CALL - homes.length;
    const listed = budget <= 0 ? [] : await this.q.catalog().listHomes({ types: query.type === undefined ? undefined : [query.type], states: [...TERMINAL_STATES] }, inCatalog ? cursor.h : "", false, budget);
    const items = await this.from([...homes, ...listed.filter((h) => !direct.includes(h))], query.limit);
    const last = listed.at(-1);
    const more = listed.length === budget && budget > 0 && last !== undefined;
    return { items, nextCursor: more ? encodeCursor({ h: last, s: -1, c: 1 }) : null };
  }

  /** from: each home's dead callbacks in turn, up to `limit` in all. */
  private async from(homes: readonly string[], limit: number): Promise<DeadCallbacks["items"]> {
    const items: DeadCallbacks["items"] = [];
    for (const home of homes) {
      if (items.length >= limit) break;
      items.push(...(await this.q.scope(home).deadCallbacks(limit - items.length)));
    }
    return items;
  }
}
