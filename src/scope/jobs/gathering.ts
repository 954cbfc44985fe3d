/**
 * A batch type's gathering (docs/handlers.md "Batch handlers"): with `batch.maxWaitMs`, its jobs wait until `maxSize`
 * of them are due in this object or the longest-due has waited `maxWaitMs`, whoever takes them — the dispatcher
 * (dispatch/batch-take.ts, through its port) or a pull claim (pull-permits.ts). The one place the rule is written.
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import { countDue, oldestDue } from "./claim";
import { pendingTypes } from "./counts";
import type { HomeStore } from "./home-store";

/** gatherUntil: when the type's gathering here ends, or null when its jobs may be taken now (or it does not gather). */
export function gatherUntil(store: HomeStore, type: string, now: number): number | null {
  const b = store.config.typeSettings(type).batch;
  if (b === null || b.maxWaitMs === 0) return null;
  if (countDue(store.sql, type, now, b.maxSize) >= b.maxSize) return null;
  const oldest = oldestDue(store.sql, type, now);
  return oldest !== null && oldest + b.maxWaitMs > now ? oldest + b.maxWaitMs : null;
}

/** Each config's pulled types that gather: worked out once, as the wake-up asks after every write. */
const GATHERERS = new WeakMap<QueueConfig, string[]>();

/** pulledGatherers: the pulled types that gather (config). */
function pulledGatherers(store: HomeStore): string[] {
  const { config } = store;
  let list = GATHERERS.get(config);
  if (!list) {
    list = Object.keys(config.types).filter((t) => !config.pushTypes.includes(t) && (config.typeSettings(t).batch?.maxWaitMs ?? 0) > 0);
    GATHERERS.set(config, list);
  }
  return list;
}

/**
 * gatheringsOver: the pulled types that gather whose jobs here may be taken now — due, and no longer gathering —
 * for the alarm to wake their parked claims (a claim parked while they gathered is told nothing else).
 */
export function gatheringsOver(store: HomeStore, now: number): string[] {
  const gatherers = pulledGatherers(store);
  if (gatherers.length === 0) return [];
  const present = pendingTypes(store.sql);
  return gatherers.filter((t) => present.includes(t) && countDue(store.sql, t, now, 1) > 0 && gatherUntil(store, t, now) === null);
}

/** nextGatherEnd: the earliest end of a pulled type's gathering here, for the alarm (a pushed type's is the dispatcher's). */
export function nextGatherEnd(store: HomeStore, now: number): number | null {
  const gatherers = pulledGatherers(store);
  if (gatherers.length === 0) return null;
  const present = pendingTypes(store.sql);
  let at: number | null = null;
  for (const t of gatherers) {
    if (!present.includes(t)) continue;
    const until = gatherUntil(store, t, now);
    if (until !== null) at = Math.min(at ?? until, until);
  }
  return at;
}
