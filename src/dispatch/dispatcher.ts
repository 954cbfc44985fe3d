/**
 * Push dispatch inside one scope object (DESIGN.md §4).
 *
 * `fill(origin)` starts handler calls for due jobs of push types: for each
 * batch it takes the type's permits first (its concurrency, its pools and its
 * notWhileRunning guards; permit-plan.ts),
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
 * ignored by the fenced settle. If the object dies, nothing renews; the
 * instance that starts next releases the orphaned attempts at once, uncounted
 * (scope/orphans.ts), and the reap pass recovers any lease that still lapses.
 *
 * @module
 */
import type { QueueConfig, TypeSettings } from "../config/schema";
import { busyHere, claimJobs, countDue, isSerial, serialBusy } from "../scope/claim";
import { pendingTypes } from "../scope/counts";
import { scopeOfRow, type JobRow } from "../scope/job-row";
import { completeMany, heartbeat } from "../scope/settle";
import type { ScopeStore } from "../scope/store";
import { applyOutcome, resultText } from "./apply-outcome";
import { BatchControl } from "./batch-control";
import type { AbortReason, DispatchJob, HandlerEntrypointApi, HandlerOutcome, Journal, JournalAnswer, JournalWrite } from "./contract";
import { appendStep, journalsOf } from "../scope/steps";
import { readOutcome, readOutcomes } from "./outcome";
import { permitPlan, PERMIT_TTL_FACTOR, POOL_CALL_TIMEOUT_MS, takePermits, withTimeout, type Held, type PoolApi } from "./permit-plan";
import { Reachability } from "./reachability";

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

/** A type blocked this many times in a row logs `job:starving`, then every STARVING_EVERY more. */
export const STARVING_AFTER = 20;
export const STARVING_EVERY = 100;
/** How long a type waiting for another type's work backs off before it asks the catalog again. */
export const WAITS_FOR_RETRY_MS = 1_000;

export interface DispatcherDeps {
  store: ScopeStore;
  config: QueueConfig;
  now(): number;
  home(): string;
  handler(binding: string): HandlerEntrypointApi;
  pool(name: string): PoolApi;
  keepAlive(p: Promise<unknown>): void;
  /** Invocations a call may cost its event: the call itself, plus observer batches when an observer is set. */
  invocationsPerCall: number;
  /** Rows changed (started, settled): emit their events, tell the catalog, re-arm. */
  changed(rows: JobRow[], now: number): Promise<void>;
  /** Run the reap pass now (an attempt reached its timeout). */
  reapNow(): Promise<void>;
  /** The first of these types with due or running work anywhere (the catalog's view), or null. */
  busyType(types: string[]): Promise<string | null>;
}

/** One handler call: its jobs, the permits it holds until it returns, and what it settled. */
interface Permit {
  pool: string;
  id: string;
}

interface Call {
  type: string;
  origin: Origin;
  rows: Map<string, JobRow>;
  /** Per job: one permit in each pool its type needs. */
  permits: Map<string, Permit[]>;
  settled: JobRow[];
  control: BatchControl;
  leaseMs: number;
}

/** Why a call returned no answer; `unreachedWaitMs` when it never reached the handler (its jobs wait that long, unspent). */
interface Failure {
  error: string;
  unreachedWaitMs: number | null;
}

/** A job whose attempt this object is running: it holds the lease (token) until settled, timed out, cancelled or lost. */
interface Flight {
  id: string;
  token: string;
  call: Call;
  timer: ReturnType<typeof setTimeout> | null;
}

interface Batch {
  type: string;
  settings: TypeSettings;
  rows: JobRow[];
  /** Per row, in order. */
  permits: Permit[][];
  now: number;
}

export class Dispatcher {
  private readonly flights = new Map<string, Flight>();
  private readonly calls = new Set<Call>();
  private readonly callsInFlight = new Set<Promise<void>>();
  private readonly blockedUntil = new Map<string, number>();
  private filling: Promise<void> | null = null;
  private current: Origin | null = null;
  private refill = false;
  private spare: Origin | null = null;
  private renewTimer: ReturnType<typeof setInterval> | null = null;
  private reapQueued = false;
  private cursor = 0;
  private readonly blockedTimes = new Map<string, number>();
  private earlyRows: JobRow[] = [];
  private readonly releases = new Map<string, { pool: string; ids: string[]; refund: boolean }>();
  private releaseTimer: ReturnType<typeof setTimeout> | null = null;
  private earlyTimer: ReturnType<typeof setTimeout> | null = null;
  private unblocks = 0;

  private readonly reachability: Reachability;

  constructor(private readonly deps: DispatcherDeps) {
    this.reachability = new Reachability(() => deps.home(), () => deps.now());
  }

  newOrigin(): Origin {
    return { invocations: 0 };
  }

  /** fill starts what calls it can now; resolves when it can start no more (the calls themselves run on). */
  fill(origin: Origin): Promise<void> {
    if (this.filling) {
      this.refill = true;
      if (origin !== this.current && this.hasBudget(origin)) this.spare ??= origin;
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
      const t = until !== undefined && until > now ? until : this.filling ? now + FILL_GRACE_MS : this.calls.size >= MAX_CALLS_IN_FLIGHT ? null : now;
      if (t !== null) at = Math.min(at ?? t, t);
    }
    return at;
  }

  /** A pool freed a slot for us: forget the back-off and try again. */
  unblock(): void {
    this.blockedUntil.clear();
    // A refusal still on its way was decided before the slot freed: it must not back the type off again.
    this.unblocks++;
  }

  /** idle resolves once no handler call of this object is in flight (and their outcomes are settled). */
  async idle(): Promise<void> {
    while (this.callsInFlight.size > 0) await Promise.allSettled([...this.callsInFlight]);
  }

  /** The job was cancelled: abort its signal in the handler. */
  cancelled(id: string): void {
    const flight = this.flights.get(id);
    if (flight) this.abort(flight, "cancelled");
  }

  /** The reap pass settled these rows: a flight still running for one of them has lost its lease. */
  reaped(rows: readonly JobRow[], now: number): void {
    for (const row of rows) {
      const flight = this.flights.get(row.id);
      if (!flight) continue;
      const timedOut = row.timeout_ms !== null && row.started_at !== null && now >= row.started_at + row.timeout_ms;
      this.abort(flight, timedOut ? "timeout" : "lease_lost");
    }
  }

  private hasBudget(origin: Origin): boolean {
    return origin.invocations + this.deps.invocationsPerCall <= INVOCATIONS_PER_EVENT;
  }

  private async loop(origin: Origin): Promise<void> {
    this.current = origin;
    try {
      for (;;) {
        this.refill = false;
        if (this.calls.size >= MAX_CALLS_IN_FLIGHT) break;
        if (!this.hasBudget(this.current)) {
          // This event's share is spent. Another event's, if one asked meanwhile; else the alarm (armed for "now") continues.
          if (!this.spare || !this.hasBudget(this.spare)) break;
          this.current = this.spare;
          this.spare = null;
        }
        const batch = await this.takeBatch();
        if (!batch) {
          if (this.refill) continue;
          break;
        }
        this.current.invocations += this.deps.invocationsPerCall;
        this.start(batch, this.current);
      }
    } finally {
      this.spare = null;
      this.current = null;
    }
  }

  /** dueTypes: push types with a due pending job here (not backed off, unless `all`). */
  private dueTypes(now: number, all = false): string[] {
    const push = this.deps.config.pushTypes;
    if (push.length === 0) return [];
    // A serialized type whose scope has a job running waits for that job's end (which fills again), not for the alarm.
    return pendingTypes(this.deps.store.sql).filter(
      (t) =>
        push.includes(t) &&
        (all || !((this.blockedUntil.get(t) ?? 0) > now)) &&
        countDue(this.deps.store.sql, t, now, 1) > 0 &&
        !(isSerial(this.deps.store, t) && (serialBusy(this.deps.store.sql, t, now) || this.serialCallRunning(t))),
    );
  }

  private async takeBatch(): Promise<Batch | null> {
    const types = this.dueTypes(this.deps.now());
    for (let k = 0; k < types.length; k++) {
      // Round-robin over types, so one busy type cannot starve another in the same object.
      const type = types[(this.cursor + k) % types.length]!;
      const batch = await this.takeBatchOf(type);
      if (!batch) continue;
      this.cursor = (this.cursor + k + 1) % Math.max(types.length, 1);
      return batch;
    }
    return null;
  }

  /**
   * takeBatchOf: the guards first (waitsFor asks the catalog), then every
   * permit the type needs — asked for no more jobs than are due, outside any
   * transaction, trimmed to the smallest grant — then the claim.
   */
  private async takeBatchOf(type: string): Promise<Batch | null> {
    const settings = this.deps.config.typeSettings(type);
    const epoch = this.unblocks;
    if (this.serialCallRunning(type)) return null; // its call's return fills again
    if (settings.waitsFor.length > 0) {
      // This object's own work first (exact), then everyone's (the catalog, about a second behind at most).
      const busy = busyHere(this.deps.store.sql, settings.waitsFor, this.deps.now()) ?? (await this.deps.busyType(settings.waitsFor).catch(() => settings.waitsFor[0]!));
      if (busy) return this.blocked(type, WAITS_FOR_RETRY_MS, `waitsFor ${busy}: it has due or running work`, epoch);
    }
    const plan = permitPlan(this.deps.config, type);
    const limit = isSerial(this.deps.store, type) ? 1 : this.batchFor(type, settings.batchSize);
    let want = plan.length > 0 ? Math.max(1, countDue(this.deps.store.sql, type, this.deps.now(), limit)) : limit;
    let held: Held[] = [];
    if (plan.length > 0) {
      const taken = await takePermits(plan, { holder: this.deps.home(), want, ttlMs: settings.leaseMs * PERMIT_TTL_FACTOR }, this.deps.pool, (pool, ids) => this.release(pool, ids, true));
      if (!taken.ok) return this.blocked(type, taken.retryAfterMs, taken.why, epoch);
      want = taken.count;
      held = taken.held;
    }
    const now = this.deps.now();
    const rows = claimJobs(this.deps.store, { worker: "push", types: [type], limit: want, leaseMs: settings.leaseMs }, now);
    // Fewer due than permits (another claim took some): the rest never start, so their rate spend is refunded.
    for (const h of held) this.release(h.pool, h.ids.slice(rows.length), true);
    if (rows.length === 0) return null;
    this.blockedTimes.delete(type);
    return { type, settings, rows, permits: rows.map((_, i) => held.map((h) => ({ pool: h.pool, id: h.ids[i]! }))), now };
  }

  /**
   * batchFor: how many jobs the next call of the type carries — every due job,
   * up to `max` (the type's batchSize, 100 by default). A job alone goes alone,
   * at once; a backlog goes 100 a call, where a call's fixed cost (the RPC, its
   * claim and settle transactions, the re-arm) is shared by the most jobs.
   * Spreading a few due jobs over several calls would buy nothing: a call runs
   * its jobs concurrently, and reports each that finishes early on its own.
   * Fewer, fuller calls are what let many objects share one handler Worker.
   */
  private batchFor(type: string, max: number): number {
    return Math.max(1, countDue(this.deps.store.sql, type, this.deps.now(), max));
  }

  /**
   * serialCallRunning: a serialized type whose call has not returned — its job may still run in the handler
   * after a timeout or cancel ended its lease, so the scope's next job waits for the call, not the lease.
   */
  private serialCallRunning(type: string): boolean {
    if (!isSerial(this.deps.store, type)) return false;
    for (const c of this.calls) if (c.type === type) return true;
    return false;
  }

  /** blocked: back off this type, and say so once it has been blocked for long (a starving type names what starves it). */
  private blocked(type: string, retryAfterMs: number, why: string, epoch = this.unblocks): null {
    // Unblocked while the refusal was on its way: the refill that follows tries again at once.
    if (epoch === this.unblocks) this.blockedUntil.set(type, this.deps.now() + retryAfterMs);
    const n = (this.blockedTimes.get(type) ?? 0) + 1;
    this.blockedTimes.set(type, n);
    if (n === STARVING_AFTER || (n > STARVING_AFTER && (n - STARVING_AFTER) % STARVING_EVERY === 0)) {
      console.warn(JSON.stringify({ event: "job:starving", type, home: this.deps.home(), blockedTimes: n, blockedBy: why }));
    }
    return null;
  }

  private start(b: Batch, origin: Origin): void {
    const call: Call = {
      type: b.type,
      origin,
      rows: new Map(b.rows.map((r) => [r.id, r])),
      permits: new Map(b.rows.map((r, i) => [r.id, b.permits[i]!])),
      settled: [],
      control: new BatchControl(
        (item) => {
          const read = readOutcome(item);
          if (read) this.settleJob(call, read.id, read.outcome, this.deps.now());
        },
        // The writes of one moment in one transaction: one commit for a batch whose jobs finish a step together.
        (writes) => this.deps.store.atomic(() => writes.map((w) => this.journalWrite(call, w))),
      ),
      leaseMs: b.settings.leaseMs,
    };
    for (const row of b.rows) {
      const token = row.lease_token!;
      // A job is claimed only when pending, so no flight should exist for it; if one does, it has lost its lease.
      const stale = this.flights.get(row.id);
      if (stale) this.abort(stale, "lease_lost");
      const flight: Flight = { id: row.id, token, call, timer: null };
      if (row.timeout_ms !== null && row.started_at !== null) {
        const due = row.started_at + row.timeout_ms - this.deps.now() + 1;
        flight.timer = setTimeout(() => {
          const f = this.flights.get(row.id);
          if (f && f.token === token) this.timedOut(f);
        }, due);
      }
      this.flights.set(row.id, flight);
    }
    this.calls.add(call);
    this.ensureRenewal(b.settings.leaseMs);
    // Each job's journal of durable steps rides with it, so a replayed step answers without a call back (scope/steps.ts).
    const journals = journalsOf(this.deps.store, b.rows.map((r) => r.seq));
    const jobs = b.rows.map((r) => toDispatchJob(r, b.now, journals.get(r.seq)));
    const promise = (async () => {
      const binding = b.settings.binding!;
      let answer: unknown = null;
      let failure: Failure | null = null;
      try {
        answer = await this.deps.handler(binding).run({ type: b.type, jobs }, call.control);
      } catch (e) {
        failure = { error: `handler call failed: ${String(e)}`, unreachedWaitMs: null };
        // Never reached the handler's code: the platform's failure, not the job's (reachability.ts).
        if (!call.control.reached) {
          failure = { error: `handler unreachable: ${String(e)}`, unreachedWaitMs: this.reachability.unreachable(binding, String(e)) };
        }
      } finally {
        call.control.close();
        this.calls.delete(call);
      }
      if (call.control.reached) this.reachability.reached(binding);
      await this.finish(call, answer, failure);
      await this.fill(origin);
    })()
      .catch((e: unknown) => console.error(JSON.stringify({ event: "dispatch:settle_failed", home: this.deps.home(), error: String(e) })))
      .finally(() => this.callsInFlight.delete(promise));
    this.callsInFlight.add(promise);
    this.deps.keepAlive(promise);
    this.deps.keepAlive(this.deps.changed(b.rows, b.now));
  }

  /**
   * journalWrite: a durable step of one of this call's jobs, written only while
   * the call still holds the job's attempt (its flight) and, in SQL, its lease.
   */
  private journalWrite(call: Call, w: JournalWrite): JournalAnswer {
    const flight = this.flights.get(w.id);
    const row = call.rows.get(w.id);
    if (!flight || flight.call !== call || !row || flight.token !== row.lease_token) {
      return { ok: false, code: "lease_lost", message: "this attempt no longer holds the job (it timed out, was cancelled, or its lease was lost)" };
    }
    try {
      const out = appendStep(this.deps.store, w, flight.token, this.deps.now());
      if (out.ok) return { ok: true };
      if (out.code === "lease_lost" || out.code === "already_terminal" || out.code === "not_found") return { ok: false, code: "lease_lost", message: `this attempt no longer holds the job (${out.code})` };
      if (out.code === "conflict") return { ok: false, code: "lease_lost", message: out.reason };
      return { ok: false, code: out.code, message: out.reason };
    } catch (e) {
      // Storage failed: the step did not journal, and the handler must not go on as if it had.
      return { ok: false, code: "lease_lost", message: `the journal write failed: ${String(e)}` };
    }
  }

  /**
   * settleJob: one job's outcome, as soon as the handler reports it (or as the
   * call returns: `atEnd`); gives its permits back. Never throws.
   */
  private settleJob(call: Call, id: string, outcome: HandlerOutcome, now: number, atEnd = false): void {
    const flight = this.flights.get(id);
    const row = call.rows.get(id);
    // Not this call's flight any more (timed out, cancelled, lost, or settled already): the late outcome is ignored.
    if (!flight || flight.call !== call || !row || flight.token !== row.lease_token) return;
    this.drop(flight);
    try {
      const out = applyOutcome(this.deps.store, this.deps.config, id, flight.token, outcome, now);
      if (out.ok && atEnd) call.settled.push(out.row);
      else if (out.ok) this.settledEarly(out.row);
    } catch (e) {
      // The lease stays in SQL and is not renewed: the reap pass recovers the job.
      console.error(JSON.stringify({ event: "dispatch:settle_failed", id, error: String(e) }));
    } finally {
      for (const p of call.permits.get(id) ?? []) this.release(p.pool, [p.id]);
      call.permits.delete(id);
    }
  }

  /**
   * settledEarly: a job the handler reported before its batch ended. Its
   * events and the re-arm go out now (coalesced per tick), not when the slowest
   * job of the batch returns — by then the object may be gone and they with it.
   */
  private settledEarly(row: JobRow): void {
    this.earlyRows.push(row);
    if (this.earlyTimer) return;
    this.earlyTimer = setTimeout(() => {
      const rows = this.earlyRows;
      this.earlyRows = [];
      this.earlyTimer = null;
      this.deps.keepAlive(this.deps.changed(rows, this.deps.now()));
    }, 0);
  }

  /** finish: the call returned — settle what it did not report early, give back every permit it still holds, emit. */
  private async finish(call: Call, answer: unknown, failure: Failure | null): Promise<void> {
    const now = this.deps.now();
    const outcomes = failure === null ? readOutcomes([...call.rows.keys()], answer) : null;
    const failed: HandlerOutcome =
      failure?.unreachedWaitMs != null
        ? { kind: "retry", error: failure.error, consumesAttempt: false, retryAfterMs: failure.unreachedWaitMs }
        : { kind: "retry", error: failure?.error ?? "no outcome" };
    try {
      // Every outcome of the call in one transaction (one commit), and its completions in one statement.
      this.deps.store.atomic(() => {
        const completions: { id: string; token: string; result: string | null }[] = [];
        for (const id of call.rows.keys()) {
          const outcome = outcomes?.get(id) ?? failed;
          const flight = this.flights.get(id);
          const result = outcome.kind === "completed" ? resultText(this.deps.config, outcome) : undefined;
          if (result !== undefined && flight && flight.call === call && flight.token === call.rows.get(id)!.lease_token) {
            this.drop(flight);
            completions.push({ id, token: flight.token, result });
          } else this.settleJob(call, id, outcome, now, true);
        }
        try {
          call.settled.push(...completeMany(this.deps.store, completions, now));
        } catch (e) {
          // The leases stay in SQL and are not renewed: the reap pass recovers the jobs.
          console.error(JSON.stringify({ event: "dispatch:settle_failed", jobs: completions.length, error: String(e) }));
        }
      });
    } finally {
      // Permits of jobs that ended earlier (timed out, cancelled, lost) were kept by the call until now.
      for (const p of [...call.permits.values()].flat()) this.release(p.pool, [p.id]);
      call.permits.clear();
    }
    await this.deps.changed(call.settled, now);
  }

  /** abort ends a flight early and tells the handler why. Its permit stays with the call until the call returns. */
  private abort(flight: Flight, reason: AbortReason): void {
    this.drop(flight);
    flight.call.control.abort(flight.id, reason);
  }

  /** timedOut: the lease ended at the timeout (claim and renewal cap it there); the reap pass settles the attempt as a timeout. */
  private timedOut(flight: Flight): void {
    this.abort(flight, "timeout");
    if (this.reapQueued) return;
    // One reap for every job that times out in the same moment (one observer call, not one per job).
    this.reapQueued = true;
    setTimeout(() => {
      this.reapQueued = false;
      this.deps.keepAlive(this.deps.reapNow());
    }, 0);
  }

  private drop(flight: Flight): void {
    if (flight.timer) clearTimeout(flight.timer);
    if (this.flights.get(flight.id) === flight) this.flights.delete(flight.id);
  }

  /**
   * release gives permits back (`refund` when the attempts never started: their
   * rate spend is returned), coalesced per pool within a tick: jobs of one
   * batch settle early one by one, and a PoolDO round trip per job made the
   * pool the bottleneck of a guarded type (one object grants ~1,000 calls/s).
   * A release lost with the object lapses with its permit's TTL.
   */
  private release(pool: string, ids: string[], refund = false): void {
    if (ids.length === 0) return;
    const key = `${refund ? "refund" : "release"}\u0000${pool}`;
    const pending = this.releases.get(key);
    if (pending) {
      pending.ids.push(...ids);
      return;
    }
    this.releases.set(key, { pool, ids: [...ids], refund });
    if (this.releaseTimer) return;
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = null;
      const batches = [...this.releases.values()];
      this.releases.clear();
      for (const b of batches) {
        this.deps.keepAlive(
          withTimeout(this.deps.pool(b.pool).release(b.ids, b.refund), POOL_CALL_TIMEOUT_MS).catch((e: unknown) =>
            console.error(JSON.stringify({ event: "pool:release_failed", pool: b.pool, error: String(e) })),
          ),
        );
      }
    }, 0);
  }

  private ensureRenewal(leaseMs: number): void {
    if (this.renewTimer) return;
    const leases = this.deps.config.pushTypes.map((t) => this.deps.config.typeSettings(t).leaseMs);
    const every = Math.max(RENEW_MIN_MS, Math.floor(Math.min(leaseMs, ...leases) / 3));
    this.renewTimer = setInterval(() => this.deps.keepAlive(this.renew()), every);
  }

  /** renew: extend every in-flight lease and every permit a call holds; a lease that cannot be extended is lost, and its handler told why. */
  private async renew(): Promise<void> {
    if (this.calls.size === 0 && this.flights.size === 0) {
      if (this.renewTimer) clearInterval(this.renewTimer);
      this.renewTimer = null;
      return;
    }
    const now = this.deps.now();
    for (const flight of [...this.flights.values()]) {
      const out = heartbeat(this.deps.store, flight.id, flight.token, flight.call.leaseMs, now);
      if (!out.ok) this.abort(flight, out.code === "lease_lost" && (out.reason === "cancelled" || out.reason === "timeout") ? out.reason : "lease_lost");
    }
    const byPool = new Map<string, { ids: string[]; ttlMs: number }>();
    for (const call of this.calls) {
      for (const p of [...call.permits.values()].flat()) {
        // A pool shared by types of different leaseMs: every permit must outlive its own job's lease.
        const entry = byPool.get(p.pool) ?? { ids: [], ttlMs: 0 };
        entry.ids.push(p.id);
        entry.ttlMs = Math.max(entry.ttlMs, call.leaseMs);
        byPool.set(p.pool, entry);
      }
    }
    for (const [pool, { ids, ttlMs }] of byPool) {
      try {
        const lost = new Set(await withTimeout(this.deps.pool(pool).renew(ids, ttlMs * PERMIT_TTL_FACTOR), POOL_CALL_TIMEOUT_MS));
        if (lost.size === 0) continue;
        // The pool took the slot back (renewals stalled): the job may no longer run, or the pool would be over its limit.
        console.warn(JSON.stringify({ event: "pool:permits_lost", pool, count: lost.size }));
        for (const call of this.calls) {
          for (const [id, permits] of call.permits) {
            if (!permits.some((p) => p.pool === pool && lost.has(p.id))) continue;
            const flight = this.flights.get(id);
            if (flight && flight.call === call) this.abort(flight, "lease_lost");
          }
        }
      } catch (e) {
        console.error(JSON.stringify({ event: "pool:renew_failed", pool, error: String(e) }));
      }
    }
    // Leases moved later: move the alarm with them, so it does not wake for expiries that will not happen.
    await this.deps.changed([], now);
  }
}

function toDispatchJob(row: JobRow, now: number, journal: Journal | undefined): DispatchJob {
  return {
    dispatchedAt: now,
    ...(journal ? { journal } : {}),
    id: row.id,
    type: row.type,
    payloadJson: row.payload,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    scope: scopeOfRow(row),
    runAt: row.run_at,
    scheduledFor: row.scheduled_for,
  };
}
