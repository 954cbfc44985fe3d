/**
 * The resumable walk over homes that a job listing and a bulk action by filter make (docs/http-api.md "Listing
 * jobs", "Bulk actions"): the scope's own home when the filter names one; else the type's own shards, read directly
 * (a job enqueued there a moment ago is found though the catalog has not heard of it yet), then the homes the
 * catalog lists, after them in name order — a call visits a bounded number of homes and answers a cursor
 * (`{h, s, c?}`, coordinator/cursor.ts) where the next call goes on. The filter is translated here too, once, into
 * what a scope object reads. No SQL here.
 *
 * @module
 */
import { scopeHome } from "../job/home";
import type { JobFilter } from "../job/schemas";
import type { JobState } from "../job/states";
import type { ScopeRpc } from "../scope/api";
import { decodeCursor, encodeCursor, invalidCursor, type Cursor } from "./cursor";
import type { QueueContext } from "./queue-context";

/** ScopeFilter: a filter as a scope object reads its jobs by it (`list`, `bulk`). */
export type ScopeFilter = Parameters<ScopeRpc["list"]>[0];

/** The fields of a filter a listing's query and a bulk action's filter share (a listing's adds `dedupeKey`). */
type FilterFields = Omit<JobFilter, "state" | "scopeType" | "scopeId"> & { dedupeKey?: string };

/** scopeFilter: a listing's or a bulk action's filter as a scope object reads it, matching any of `states`. */
export function scopeFilter(f: FilterFields, states: readonly JobState[] | undefined): ScopeFilter {
  const { createdAfter, createdBefore, finishedAfter, finishedBefore } = f;
  return { types: f.type, states, tag: f.tag, failureKinds: f.failureKind, dedupeKey: f.dedupeKey, createdAfter, createdBefore, finishedAfter, finishedBefore };
}

export interface HomeWalk {
  /** The filter's scope (both or neither): only its home is visited. */
  scopeType?: string;
  scopeId?: string;
  /** The filter's types: their own shards are visited first, and the catalog is asked for homes holding jobs of them. */
  types?: readonly string[];
  /** The catalog is asked for homes holding jobs in any of these states. */
  states?: readonly JobState[];
  /** The cursor the call was given. */
  cursor?: string;
  /** Homes one call visits at most. */
  maxHomes: number;
}

/**
 * Visit: what one home's visit answers — a seq to stop at inside the home (the next call goes on there), `"full"`
 * when the home is done and so is the call, or null to go on to the next home.
 */
export type Visit = number | "full" | null;

/**
 * walkHomes: `visit(home, from)` for each home of the walk in turn, from seq `from` within it (0, or where the cursor
 * left it), until a visit stops the call or `maxHomes` were visited; answers the cursor where the next call goes
 * on, or null when every home was visited. With a scope, the cursor only ever stops inside its one home.
 */
export async function walkHomes(q: QueueContext, walk: HomeWalk, visit: (home: string, from: number) => Promise<Visit>): Promise<string | null> {
  const cursor: Cursor = walk.cursor ? decodeCursor(walk.cursor) : { h: "", s: -1 };
  if (walk.scopeType !== undefined && walk.scopeId !== undefined) {
    const home = scopeHome({ type: walk.scopeType, id: walk.scopeId }).name;
    if (walk.cursor && (cursor.h !== home || cursor.s < 0)) throw invalidCursor();
    const at = await visit(home, Math.max(cursor.s, 0));
    return typeof at === "number" ? encodeCursor({ h: home, s: at }) : null;
  }

  // The type's own homes (its unscoped jobs, one per shard) first and directly; only the scopes holding jobs of the
  // type come from the catalog, about a second behind. A cursor past the direct homes says so (`c: 1`).
  const direct = (walk.types ?? []).flatMap((t) => q.typeHomes(t));
  const inCatalog = cursor.c === 1 || (cursor.h !== "" && !direct.includes(cursor.h));
  let visited = 0;
  /** step: one home's visit; the cursor to answer with when the call stops there, else null. */
  const step = async (home: string, fromCatalog: boolean): Promise<string | null> => {
    visited++;
    const c = fromCatalog ? { c: 1 as const } : {};
    const at = await visit(home, home === cursor.h ? Math.max(cursor.s, 0) : 0);
    if (typeof at === "number") return encodeCursor({ h: home, s: at, ...c });
    if (at === "full" || visited === walk.maxHomes) return encodeCursor({ h: home, s: -1, ...c });
    return null;
  };
  if (!inCatalog) {
    const from = cursor.h === "" ? 0 : direct.indexOf(cursor.h);
    for (const home of direct.slice(from)) {
      if (home === cursor.h && cursor.s < 0) continue;
      const stop = await step(home, false);
      if (stop) return stop;
    }
  }
  const budget = walk.maxHomes - visited;
  const homes = budget <= 0 ? [] : await q.catalog().listHomes({ types: walk.types, states: walk.states }, inCatalog ? cursor.h : "", inCatalog && cursor.s >= 0, budget);
  for (const home of homes) {
    if (direct.includes(home)) continue;
    const stop = await step(home, true);
    if (stop) return stop;
  }
  const last = homes[homes.length - 1];
  return homes.length === budget && budget > 0 && last ? encodeCursor({ h: last, s: -1, c: 1 }) : null;
}
