/**
 * Push dispatch inside one scope object (DESIGN.md §4).
 *
 * `fill(origin)` starts handler calls for due jobs of push types: for each
 * batch it takes the type's permits first (if the type has a concurrency),
 * then claims up to that many jobs in one synchronous transaction (the lease
 * is written before the call leaves — the output gate holds the call until it
 * is durable), then calls the handler's `run(batch, control)` without waiting.
 * When a call returns, its jobs are settled from their outcomes and the
 * object fills again.
 *
 * Bounds: at most MAX_CALLS_IN_FLIGHT calls per object, and each incoming
 * event (the enqueue, the alarm, a pool's poke) starts calls only within its
 * share of the platform's 32 service-binding invocations per request; past
 * that, the alarm is set for now and the next event continues.
 *
 * While a call is in flight its leases (and permits) are renewed every third
 * of the lease. A timeout, a cancel or a lost lease aborts the job's signal in
 * the handler through the batch's BatchControl; the late outcome is then
 * ignored by the fenced settle. If the object dies, nothing renews: the
 * leases lapse and the reap pass recovers the jobs — one lease expiry lost.
 *
 * @module
 */
import type { QueueConfig, TypeSettings } from "../config/schema";
import { typePoolName } from "../pool/pool-name";
import { claimJobs } from "../scope/claim";
import { pendingTypes } from "../scope/counts";
import type { JobRow } from "../scope/job-row";
import { heartbeat } from "../scope/settle";
import type { ScopeStore } from "../scope/store";
import { applyOutcome } from "./apply-outcome";
import { BatchControl } from "./batch-control";
import type { AbortReason, DispatchJob, HandlerEntrypointApi } from "./contract";
import { readOutcomes } from "./outcome";

/** Handler calls in flight per object: beyond this, a finishing call makes room. */
export const MAX_CALLS_IN_FLIGHT = 16;
/** Service-binding invocations one event may make: the platform allows 32 per request; keep a margin. */
export const INVOCATIONS_PER_EVENT = 30;
/** While a fill is under way, the alarm still stands guard this far out in case the object dies mid-fill. */
export const FILL_GRACE_MS = 5_000;
const RENEW_MIN_MS = 100;

/** The budget of the incoming event that started a chain of calls. */
export interface Origin {
  invocations: number;
}

export interface PoolApi {
  acquire(holder: string, want: number, limit: number, ttlMs: number): Promise<{ permits: string[]; retryAfterMs: number }>;
  renew(ids: string[], ttlMs: number): Promise<string[]>;
  release(ids: string[]): Promise<void>;
}

export interface DispatcherDeps {
  store: ScopeStore;
  config: QueueConfig;
  now(): number;
  home(): string;
  handler(binding: string): HandlerEntrypointApi;
  pool(name: string): PoolApi;
  keepAlive(p: Promise<unknown>): void;
  /** Invocations a call costs this event (1, or 3 with an observer). */
  invocationsPerCall: number;
  /** Rows changed (started, settled): emit their events, tell the catalog, re-arm. */
  changed(rows: JobRow[], now: number): Promise<void>;
  /** Run the reap pass now (an attempt reached its timeout). */
  reapNow(): Promise<void>;
}

interface Flight {
  id: string;
  token: string;
  leaseMs: number;
  control: BatchControl;
  timer: ReturnType<typeof setTimeout> | null;
  permit: { pool: string; id: string } | null;
}

interface Batch {
  type: string;
  settings: TypeSettings;
  rows: JobRow[];
  pool: string | null;
  permits: string[];
  now: number;
}

/** jobHasDue: job_due_idx (type, run_at) — one seek. */
const JOB_HAS_DUE = "SELECT 1 AS due FROM job WHERE state = 'pending' AND type = ? AND run_at <= ? LIMIT 1";

export class Dispatcher {
  private readonly flights = new Map<string, Flight>();
  private calls = 0;
  private readonly blockedUntil = new Map<string, number>();
  private filling: Promise<void> | null = null;
  private refill = false;
  private spare: Origin | null = null;
  private renewTimer: ReturnType<typeof setInterval> | null = null;
  private cursor = 0;
  private readonly callsInFlight = new Set<Promise<void>>();

  constructor(private readonly deps: DispatcherDeps) {}

  newOrigin(): Origin {
    return { invocations: 0 };
  }

  /** fill starts what calls it can now; resolves when it can start no more (the calls themselves run on). */
  fill(origin: Origin): Promise<void> {
    if (this.filling) {
      this.refill = true;
      if (this.hasBudget(origin)) this.spare ??= origin;
      return this.filling;
    }
    if (this.dueTypes(this.deps.now()).length === 0) return Promise.resolve();
    const run: { p: Promise<void> | null } = { p: null };
    run.p = (async () => {
      try {
        await this.loop(origin);
      } finally {
        if (this.filling === run.p) this.filling = null;
      }
      // Re-arm now that nothing is filling: due work left over (budget spent, pool full) sets the next wake.
      await this.deps.changed([], this.deps.now());
    })();
    this.filling = run.p;
    this.deps.keepAlive(run.p);
    return run.p;
  }

  /** wakeAt: when the alarm must come for push work, or null (DESIGN.md §3, invariant 4, for due push jobs). */
  wakeAt(now: number): number | null {
    let at: number | null = null;
    for (const type of this.dueTypes(now, true)) {
      const until = this.blockedUntil.get(type);
      const t = until !== undefined && until > now ? until : this.filling ? now + FILL_GRACE_MS : this.calls >= MAX_CALLS_IN_FLIGHT ? null : now;
      if (t !== null) at = Math.min(at ?? t, t);
    }
    return at;
  }

  /** A pool freed a slot for us: forget the back-off and try again. */
  unblock(): void {
    this.blockedUntil.clear();
  }

  /** idle resolves once no handler call of this object is in flight (and their outcomes are settled). */
  async idle(): Promise<void> {
    while (this.callsInFlight.size > 0) await Promise.allSettled([...this.callsInFlight]);
  }

  /** The job was cancelled: abort its signal and give its permit back. */
  cancelled(id: string): void {
    this.abort(id, "cancelled");
  }

  private hasBudget(origin: Origin): boolean {
    return origin.invocations + this.deps.invocationsPerCall <= INVOCATIONS_PER_EVENT;
  }

  private async loop(origin: Origin): Promise<void> {
    try {
      for (;;) {
        this.refill = false;
        if (this.calls >= MAX_CALLS_IN_FLIGHT) break;
        if (!this.hasBudget(origin)) {
          if (!this.spare) break; // the alarm (armed for "now" by wakeAt) continues in a new event
          origin = this.spare;
          this.spare = null;
        }
        const batch = await this.takeBatch();
        if (!batch) {
          if (this.refill) continue;
          break;
        }
        origin.invocations += this.deps.invocationsPerCall;
        this.start(batch, origin);
      }
    } finally {
      this.spare = null;
    }
  }

  /** dueTypes: push types with a due pending job here (not backed off, unless `all`). */
  private dueTypes(now: number, all = false): string[] {
    const push = this.deps.config.pushTypes;
    if (push.length === 0) return [];
    const sql = this.deps.store.sql;
    return pendingTypes(sql).filter(
      (t) => push.includes(t) && (all || !((this.blockedUntil.get(t) ?? 0) > now)) && sql.exec(JOB_HAS_DUE, t, now).toArray().length > 0,
    );
  }

  private async takeBatch(): Promise<Batch | null> {
    const types = this.dueTypes(this.deps.now());
    for (let k = 0; k < types.length; k++) {
      // Round-robin over types, so one busy type cannot starve another in the same object.
      const type = types[(this.cursor + k) % types.length]!;
      const settings = this.deps.config.typeSettings(type);
      let want = settings.batchSize;
      let permits: string[] = [];
      const pool = settings.concurrency ? typePoolName(type) : null;
      if (pool) {
        // Permits first, outside any transaction; the claim below takes at most as many jobs.
        const grant = await this.deps.pool(pool).acquire(this.deps.home(), want, settings.concurrency!, settings.leaseMs);
        if (grant.permits.length === 0) {
          this.blockedUntil.set(type, this.deps.now() + grant.retryAfterMs);
          continue;
        }
        permits = grant.permits;
        want = permits.length;
      }
      const now = this.deps.now();
      const rows = claimJobs(this.deps.store, { worker: "push", types: [type], limit: want, leaseMs: settings.leaseMs }, now);
      if (pool && permits.length > rows.length) this.releasePermits(new Map([[pool, permits.slice(rows.length)]]));
      if (rows.length === 0) continue;
      this.cursor = (this.cursor + k + 1) % Math.max(types.length, 1);
      return { type, settings, rows, pool, permits: permits.slice(0, rows.length), now };
    }
    return null;
  }

  private start(b: Batch, origin: Origin): void {
    const control = new BatchControl();
    b.rows.forEach((row, i) => {
      const flight: Flight = {
        id: row.id,
        token: row.lease_token!,
        leaseMs: b.settings.leaseMs,
        control,
        timer: null,
        permit: b.pool ? { pool: b.pool, id: b.permits[i]! } : null,
      };
      if (row.timeout_ms !== null && row.started_at !== null) {
        flight.timer = setTimeout(() => this.abort(row.id, "timeout"), row.started_at + row.timeout_ms - this.deps.now() + 1);
      }
      this.flights.set(row.id, flight);
    });
    this.calls++;
    this.ensureRenewal(b.settings.leaseMs);
    const jobs = b.rows.map(toDispatchJob);
    const call = (async () => {
      let answer: unknown = null;
      let failure: string | null = null;
      try {
        answer = await this.deps.handler(b.settings.binding!).run({ type: b.type, jobs }, control);
      } catch (e) {
        failure = `handler call failed: ${String(e)}`;
      } finally {
        this.calls--;
        control.close();
      }
      await this.settle(b.rows, answer, failure);
      await this.fill(origin);
    })()
      .catch((e: unknown) => console.error(JSON.stringify({ event: "dispatch:settle_failed", home: this.deps.home(), error: String(e) })))
      .finally(() => this.callsInFlight.delete(call));
    this.callsInFlight.add(call);
    this.deps.keepAlive(call);
    this.deps.keepAlive(this.deps.changed(b.rows, b.now));
  }

  private async settle(rows: JobRow[], answer: unknown, failure: string | null): Promise<void> {
    const now = this.deps.now();
    const outcomes = failure === null ? readOutcomes(rows.map((r) => r.id), answer) : null;
    const settled: JobRow[] = [];
    const permits = new Map<string, string[]>();
    for (const row of rows) {
      const flight = this.flights.get(row.id);
      // Timed out, cancelled or lease lost while the call ran: that path already ended the attempt; the late answer is ignored.
      if (!flight || flight.token !== row.lease_token) continue;
      this.drop(flight, permits);
      const outcome = outcomes?.get(row.id) ?? { kind: "retry" as const, error: failure ?? "no outcome" };
      const out = applyOutcome(this.deps.store, this.deps.config, row.id, flight.token, outcome, now);
      if (out.ok) settled.push(out.row);
    }
    this.releasePermits(permits);
    await this.deps.changed(settled, now);
  }

  /** abort ends a flight early: tell the handler why, free its permit; a timeout is settled by the reap pass (the lease ends at the timeout). */
  private abort(id: string, reason: AbortReason): void {
    const flight = this.flights.get(id);
    if (!flight) return;
    const permits = new Map<string, string[]>();
    this.drop(flight, permits);
    flight.control.abort(id, reason);
    this.releasePermits(permits);
    if (reason === "timeout") this.deps.keepAlive(this.deps.reapNow());
  }

  private drop(flight: Flight, permits: Map<string, string[]>): void {
    if (flight.timer) clearTimeout(flight.timer);
    this.flights.delete(flight.id);
    if (flight.permit) permits.set(flight.permit.pool, [...(permits.get(flight.permit.pool) ?? []), flight.permit.id]);
  }

  private releasePermits(permits: Map<string, string[]>): void {
    for (const [pool, ids] of permits) {
      if (ids.length === 0) continue;
      this.deps.keepAlive(
        this.deps
          .pool(pool)
          .release(ids)
          .catch((e: unknown) => console.error(JSON.stringify({ event: "pool:release_failed", pool, error: String(e) }))),
      );
    }
  }

  private ensureRenewal(leaseMs: number): void {
    if (this.renewTimer) return;
    const every = Math.max(RENEW_MIN_MS, Math.floor(Math.min(leaseMs, ...this.pushLeases()) / 3));
    this.renewTimer = setInterval(() => this.deps.keepAlive(this.renew()), every);
  }

  private pushLeases(): number[] {
    return this.deps.config.pushTypes.map((t) => this.deps.config.typeSettings(t).leaseMs);
  }

  /** renew: extend every in-flight lease and permit; a lease that cannot be extended is lost, and its handler told why. */
  private async renew(): Promise<void> {
    if (this.flights.size === 0) {
      if (this.renewTimer) clearInterval(this.renewTimer);
      this.renewTimer = null;
      return;
    }
    const now = this.deps.now();
    const byPool = new Map<string, { ids: string[]; ttlMs: number }>();
    for (const flight of [...this.flights.values()]) {
      const out = heartbeat(this.deps.store, flight.id, flight.token, flight.leaseMs, now);
      if (!out.ok) {
        this.abort(flight.id, out.code === "lease_lost" && (out.reason === "cancelled" || out.reason === "timeout") ? out.reason : "lease_lost");
        continue;
      }
      if (flight.permit) {
        const entry = byPool.get(flight.permit.pool) ?? { ids: [], ttlMs: flight.leaseMs };
        entry.ids.push(flight.permit.id);
        byPool.set(flight.permit.pool, entry);
      }
    }
    for (const [pool, { ids, ttlMs }] of byPool) {
      try {
        const lost = await this.deps.pool(pool).renew(ids, ttlMs);
        if (lost.length) console.warn(JSON.stringify({ event: "pool:permits_lost", pool, count: lost.length }));
      } catch (e) {
        console.error(JSON.stringify({ event: "pool:renew_failed", pool, error: String(e) }));
      }
    }
  }
}

function toDispatchJob(row: JobRow): DispatchJob {
  return {
    id: row.id,
    type: row.type,
    payloadJson: row.payload,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    scope: row.scope_type !== null && row.scope_id !== null ? { type: row.scope_type, id: row.scope_id } : null,
    runAt: row.run_at,
  };
}
