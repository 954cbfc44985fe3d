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
import type { Lens } from "../../sealing/lens";
import { keyedType } from "../../config/limits";
import type { QueueConfig } from "../../config/schema";
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
  if (!goesStraight(store.config, type)) return 0;
  // Retries this object holds (jobs/held-retries.ts) are pending but backing off, restarted by their own time; their
  // moves may still be owed (jobs/count-debt.ts).
  const pending = pendingOfType(store.sql, type) + store.debt.owedOf(type, "pending") - store.pushed.held.ofType(type).n;
  if (!pauseFresh(now) || isPaused(store.sql, type) || pending > 0) return 0;
  return dispatcher.room(type, now);
}

/** goesStraight: by its config alone, a job of `type` may start straight from this object's memory — new, or a held retry. */
export function goesStraight(config: QueueConfig, type: string): boolean {
  if (!config.pushTypes.includes(type)) return false;
  const s = config.typeSettings(type);
  return !(s.batch !== null || s.waitsFor.length > 0 || s.ordered || keyedType(config, type) || permitPlan(config, type).length > 0);
}

/**
 * holdRetry: the core's `holdRetry` hook — a failed pushed attempt (its lease held in memory) of a type that goes
 * straight is held by this object's dispatcher for its backoff (jobs/held-retries.ts): its restart needs no claim,
 * no permit and no order, as a new job's straight start does not.
 */
export function holdRetry(store: HomeStore, row: JobRow): boolean {
  return row.lease_owner === PUSH_WORKER && row.lease_kept === 0 && goesStraight(store.config, row.type);
}

/** leasedStraight: the rows a write inserted straight to a handler, by type, as the dispatcher sends them. */
export function leasedStraight(rows: readonly JobRow[], now: number, lens: Lens): Map<string, Leased[]> {
  const out = new Map<string, Leased[]>();
  for (const r of rows) {
    if (r.state !== "running" || r.lease_owner !== PUSH_WORKER) continue;
    const leased: Leased = { id: r.id, token: r.lease_token!, timeoutAt: attemptDeadline(r), key: r.limit_key, job: toDispatchJob(r, now, undefined, lens) };
    const list = out.get(r.type);
    if (list) list.push(leased);
    else out.set(r.type, [leased]);
  }
  return out;
}
