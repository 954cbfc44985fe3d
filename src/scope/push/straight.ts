/**
 * Straight to a handler (docs/design.md "Straight to a handler"): a new job
 * due now, of a pushed type that needs no permit, is inserted `running`
 * under a lease held in memory (jobs/pushed-leases.ts), and its handler call
 * starts once the enqueue commits — the claim's write and the claim index
 * entry its pending insert wrote are never written. Everything else about the
 * attempt is a pushed attempt's: renewed, settled, reaped, and given back by
 * the next instance if this one dies before or during the call (orphans.ts).
 *
 * @module
 */
import { keyedType } from "../../config/limits";
import type { Leased } from "../../dispatch/scope-port";
import type { Dispatcher } from "../../dispatch/dispatcher";
import { permitPlan } from "../../pool/permit-plan";
import { pendingOfType } from "../jobs/counts";
import type { HomeStore } from "../jobs/home-store";
import { attemptDeadline, type JobRow } from "../jobs/job-row";
import { isPaused } from "../jobs/pause-gate";
import { PUSH_WORKER } from "../jobs/pushed-leases";
import { toDispatchJob } from "./dispatch-port";

/**
 * startable: how many calls may start now for new jobs of `type` going straight to a handler (the core's `startable`
 * hook). None for a type a claim would hold back or ask a pool for — a batch type that gathers, one with `waitsFor`,
 * an ordered or keyed one, one with any permit (concurrency, rate, pools, notWhileRunning) —, a paused one (or while
 * the paused set is not known), one with jobs already pending here (a new job does not overtake them); else the
 * dispatcher's room (dispatcher.ts `room`).
 */
export function startable(store: HomeStore, dispatcher: Dispatcher<JobRow>, pauseFresh: (now: number) => boolean, type: string, now: number): number {
  const { config } = store;
  if (!config.pushTypes.includes(type)) return 0;
  const s = config.typeSettings(type);
  if (s.batch !== null || s.waitsFor.length > 0 || s.ordered || keyedType(config, type) || permitPlan(config, type).length > 0) return 0;
  if (!pauseFresh(now) || isPaused(store.sql, type) || pendingOfType(store.sql, type) > 0) return 0;
  return dispatcher.room(type, now);
}

/** leasedStraight: the rows a write inserted straight to a handler, by type, as the dispatcher sends them. */
export function leasedStraight(rows: readonly JobRow[], now: number): Map<string, Leased[]> {
  const out = new Map<string, Leased[]>();
  for (const r of rows) {
    if (r.state !== "running" || r.lease_owner !== PUSH_WORKER) continue;
    const leased: Leased = { id: r.id, token: r.lease_token!, timeoutAt: attemptDeadline(r), key: r.limit_key, job: toDispatchJob(r, now, undefined) };
    const list = out.get(r.type);
    if (list) list.push(leased);
    else out.set(r.type, [leased]);
  }
  return out;
}
