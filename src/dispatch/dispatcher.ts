/**
 * Push dispatch inside one scope object (DESIGN.md §4).
 *
 * `fill(origin)` starts handler calls for due jobs of push types: for each
 * batch it takes the type's permits first (its concurrency, its pools and its
 * notWhileRunning guards; pool/permit-plan.ts, permit-ledger.ts), then has the
 * scope lease up to that many jobs in one synchronous transaction (the lease
 * is written before the call leaves — the output gate holds the call until it
 * is durable), then calls the handler's `run(batch, control)` without waiting.
 * When a call returns, its jobs are settled from their outcomes in one
 * transaction and the object fills again.
 *
 * The dispatcher reaches the scope's jobs only through `ScopePort`
 * (scope-port.ts): it never sees a row or a statement. Its other parts are
 * modules of their own: the type back-off (backoff.ts), the permits
 * (permit-ledger.ts), the jobs its calls run (flights.ts).
 *
 * Bounds: at most MAX_CALLS_IN_FLIGHT calls per object, and each incoming
 * event (the enqueue, the alarm, a pool's poke) starts calls only within its
 * share of the platform's 32 service-binding invocations per request; past
 * that, the alarm is set for now and the next event continues.
 *
 * While a call is in flight its leases (and permits) are renewed every third
 * of the lease. A timeout, a cancel or a lost lease aborts the job's signal in
 * the handler through the batch's BatchControl; the late outcome is then
 * ignored. If the object dies, nothing renews; the instance that starts next
 * releases the orphaned attempts at once, uncounted (scope/push/orphans.ts), and
 * the reap pass recovers any lease that still lapses.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { TypeBackoff } from "./backoff";
import { BatchControl } from "./batch-control";
import type { AbortReason, DispatchJob, HandlerEntrypoint, HandlerOutcome, JournalAnswer, JournalWrite, ProgressReport } from "../job/handler-contract";
import { Flights, type Flight } from "./flights";
import { readOutcome, readOutcomes } from "./outcome";
import { PermitLedger, type Permit } from "./permit-ledger";
import { PERMIT_TTL_FACTOR, type PoolApi } from "../pool/permit-plan";
import { KeyTurns } from "../pool/key-turns";
import { takeBatchOf, type Batch } from "./batch-take";
import { Reachability } from "./reachability";
import type { Leased, ScopePort } from "./scope-port";

export type { PoolApi };

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

export interface DispatcherDeps<R> {
  /** The scope's jobs (scope/push/dispatch-port.ts). */
  jobs: ScopePort<R>;
  config: QueueConfig;
  now(): number;
  home(): string;
  handler(binding: string): HandlerEntrypoint;
  pool(name: string): PoolApi;
  keepAlive(p: Promise<unknown>): void;
  /** Invocations a call may cost its event: the call itself, plus observer batches when an observer is set. */
  invocationsPerCall: number;
  /** Jobs leased or settled (what the port returned): emit their events, tell the catalog, re-arm. */
  changed(rows: R[], now: number): Promise<void>;
  /** Keep progress its calls' jobs reported, each under its lease (scope/watching/progress.ts); absent: not kept. */
  progress?(items: { id: string; token: string; value: string }[]): Promise<void>;
  /** Steps of its calls' jobs were journaled: their live subscriptions hear of them (scope/jobs/feed.ts); absent: nobody does. */
  journaled?(): void;
  /** Run the reap pass now (an attempt reached its timeout). */
  reapNow(): Promise<void>;
  /** The first of these types with due or running work anywhere (the catalog's view), or null. */
  busyType(types: string[]): Promise<string | null>;
}

/** One handler call: its jobs (by id: their lease tokens), the permits it holds until it returns. */
interface Call {
  type: string;
  tokens: Map<string, string>;
  /** Per job: one permit in each pool its type needs. */
  permits: Map<string, Permit[]>;
  control: BatchControl;
  leaseMs: number;
}

/** Why a call returned no answer; `unreachedWaitMs` when it never reached the handler (its jobs wait that long, unspent). */
interface Failure {
  error: string;
  unreachedWaitMs: number | null;
}


export class Dispatcher<R> {
  private readonly flights = new Flights<Call>();
  private readonly calls = new Set<Call>();
  private readonly callsInFlight = new Set<Promise<void>>();
  private readonly backoff: TypeBackoff;
  private readonly permits: PermitLedger;
  private readonly reachability: Reachability;
  private readonly turns = new KeyTurns();
  /** This instance: the pools drop pushed permits its holder took under another (a dead instance's). */
  readonly epoch = crypto.randomUUID();
  private filling: Promise<void> | null = null;
  private current: Origin | null = null;
  private refill = false;
  private spare: Origin | null = null;
  private renewTimer: ReturnType<typeof setInterval> | null = null;
  private reapQueued = false;
  private cursor = 0;
  private early: R[] = [];
  private earlyTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly deps: DispatcherDeps<R>) {
    this.backoff = new TypeBackoff(deps.now, deps.home);
    this.permits = new PermitLedger(deps.pool, deps.keepAlive);
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
      const until = this.backoff.blockedUntil(type);
      const t = until !== undefined && until > now ? until : this.filling ? now + FILL_GRACE_MS : this.calls.size >= MAX_CALLS_IN_FLIGHT ? null : now;
      if (t !== null) at = Math.min(at ?? t, t);
    }
    return at;
  }

  /**
   * A pool freed a slot for us: forget the back-off and try again. A keyed pool's poke (it names itself) ends its key
   * value's wait; a poke that names no pool (a pool object of the release before) every key value's (pool/key-turns.ts).
   */
  unblock(pool?: string): void {
    if (pool === undefined) this.turns.unblockAll();
    else this.turns.unblockPool(pool);
    this.backoff.unblock();
  }

  /** fresh: jobs of these types came due: a keyed type's turn looks for key values it has not seen (pool/key-turns.ts). */
  fresh(types: readonly string[]): void {
    for (const t of new Set(types)) {
      this.turns.fresh(t);
      this.backoff.ungather(t);
    }
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

  /** The reap pass ended these attempts: a flight still running for one of them has lost its lease (or timed out). */
  reaped(ended: readonly { id: string; timedOut: boolean }[]): void {
    for (const { id, timedOut } of ended) {
      const flight = this.flights.get(id);
      if (flight) this.abort(flight, timedOut ? "timeout" : "lease_lost");
    }
  }

  /**
   * room: how many calls may start now for jobs of a type that needs no permit going straight to a handler
   * (docs/design.md "Straight to a handler"): within MAX_CALLS_IN_FLIGHT and one event's invocations; none while the
   * type is backed off (a handler unreachable) or a fill runs (its jobs would overtake the ones the fill is leasing),
   * and none for a serialized type. An enqueue shares the calls among its types (enqueue.ts, Room), and the calls
   * start synchronously after its commit (scope/push/push.ts `told`), so no other write takes them meanwhile.
   */
  room(type: string, now: number): number {
    if (this.filling || this.backoff.isBlocked(type, now) || this.deps.jobs.serial(type)) return 0;
    return Math.max(0, Math.min(MAX_CALLS_IN_FLIGHT - this.calls.size, Math.floor(INVOCATIONS_PER_EVENT / this.deps.invocationsPerCall)));
  }

  /**
   * startLeased: calls for jobs a write leased to this dispatcher as it inserted them (straight to a handler): in
   * calls of up to `batchSize`, within `origin`'s invocations; their rows' events went out with that write.
   */
  startLeased(type: string, leased: readonly Leased[], origin: Origin): void {
    const settings = this.deps.config.typeSettings(type);
    for (let i = 0; i < leased.length; i += settings.batchSize) {
      const part = leased.slice(i, i + settings.batchSize);
      origin.invocations += this.deps.invocationsPerCall;
      this.start({ type, leased: part, changed: [], permits: part.map(() => []), leaseMs: settings.leaseMs, binding: settings.binding!, now: this.deps.now() }, origin);
    }
  }

  /** How many handler calls are in flight (tests, the dashboard's future use). */
  get callCount(): number {
    return this.calls.size;
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

  /** dueTypes: push types with a due job here (not backed off, unless `all`); a serialized type waits for its call's return. */
  private dueTypes(now: number, all = false): string[] {
    return this.deps.jobs.dueTypes(now).filter((t) => (all || !this.backoff.isBlocked(t, now)) && !this.serialCallRunning(t));
  }

  private async takeBatch(): Promise<Batch<R> | null> {
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

  /** takeBatchOf: the type's next batch (batch-take.ts); a serialized type's waits while its call runs. */
  private takeBatchOf(type: string): Promise<Batch<R> | null> {
    if (this.serialCallRunning(type)) return Promise.resolve(null); // its call's return fills again
    return takeBatchOf({ ...this.deps, permits: this.permits, backoff: this.backoff, turns: this.turns, epoch: this.epoch }, type);
  }

  /**
   * serialCallRunning: a serialized type whose call has not returned — its job may still run in the handler
   * after a timeout or cancel ended its lease, so the scope's next job waits for the call, not the lease.
   */
  private serialCallRunning(type: string): boolean {
    if (!this.deps.jobs.serial(type)) return false;
    for (const c of this.calls) if (c.type === type) return true;
    return false;
  }

  private start(b: Batch<R>, origin: Origin): void {
    const call: Call = {
      type: b.type,
      tokens: new Map(b.leased.map((l) => [l.id, l.token])),
      permits: new Map(b.leased.map((l, i) => [l.id, b.permits[i]!])),
      control: new BatchControl(
        (item) => {
          const read = readOutcome(item);
          if (read) this.settleEarly(call, read.id, read.outcome);
        },
        (writes) => this.journal(call, writes),
        (items) => this.progress(call, items),
      ),
      leaseMs: b.leaseMs,
    };
    for (const l of b.leased) {
      // A job is claimed only when pending, so no flight should exist for it; if one does, it has lost its lease.
      const stale = this.flights.take(l.id, l.token, call, l.timeoutAt, this.deps.now(), (f) => this.timedOut(f));
      if (stale) stale.call.control.abort(stale.id, "lease_lost");
    }
    this.calls.add(call);
    this.ensureRenewal(b.leaseMs);
    const promise = (async () => {
      let answer: unknown = null;
      let failure: Failure | null = null;
      const jobs = await this.revealed(call, b);
      try {
        if (jobs.length > 0) answer = await this.deps.handler(b.binding).run({ type: b.type, jobs }, call.control);
      } catch (e) {
        failure = { error: `handler call failed: ${String(e)}`, unreachedWaitMs: null };
        // Never reached the handler's code: the platform's failure, not the job's (reachability.ts).
        if (!call.control.reached) {
          failure = { error: `handler unreachable: ${String(e)}`, unreachedWaitMs: this.reachability.unreachable(b.binding, String(e)) };
        }
      } finally {
        call.control.close();
        this.calls.delete(call);
      }
      if (call.control.reached) this.reachability.reached(b.binding);
      await this.finish(call, answer, failure);
      await this.fill(origin);
    })()
      .catch((e: unknown) => console.error(JSON.stringify({ event: "dispatch:settle_failed", home: this.deps.home(), error: String(e) })))
      .finally(() => this.callsInFlight.delete(promise));
    this.callsInFlight.add(promise);
    this.deps.keepAlive(promise);
    if (b.changed.length > 0) this.deps.keepAlive(this.deps.changed(b.changed, b.now));
  }

  /**
   * revealed: the call's jobs as their handler is sent them (ScopePort.reveal). One that cannot be — a sealed value
   * whose key is no longer listed — fails at once, alone: retrying cannot open it, and its batch-mates still go.
   */
  private async revealed(call: Call, b: Batch<R>): Promise<DispatchJob[]> {
    const { reveal } = this.deps.jobs;
    if (!reveal) return b.leased.map((l) => l.job);
    const out = await Promise.allSettled(b.leased.map((l) => reveal(l.job)));
    const refused = out.flatMap((r, i) => (r.status === "rejected" ? [{ id: b.leased[i]!.id, outcome: { kind: "failed", error: `its values could not be made ready for its handler: ${String(r.reason)}` } as HandlerOutcome }] : []));
    if (refused.length > 0) this.deps.keepAlive(this.deps.changed(this.settle(call, refused, this.deps.now()), this.deps.now()));
    return out.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  }

  /** held: the job's flight, if this call still runs it under the token it leased. */
  private held(call: Call, id: string): Flight<Call> | undefined {
    const token = call.tokens.get(id);
    return token === undefined ? undefined : this.flights.heldBy(id, call, token);
  }

  /** journal: durable steps of this call's jobs, written only while the call still holds each job's attempt. */
  private async journal(call: Call, writes: JournalWrite[]): Promise<JournalAnswer[]> {
    const lost: JournalAnswer = { ok: false, code: "lease_lost", message: "this attempt no longer holds the job (it timed out, was cancelled, or its lease was lost)" };
    const live = writes.map((w) => ({ write: w, flight: this.held(call, w.id) }));
    const asked = live.filter((x) => x.flight !== undefined).map((x) => ({ write: x.write, token: x.flight!.token }));
    const answers = asked.length > 0 ? await this.deps.jobs.journal(asked, this.deps.now()) : [];
    // Watchers of these jobs hear of the steps now, not at the call's end (scope/jobs/feed.ts).
    if (asked.length > 0) this.deps.journaled?.();
    let i = 0;
    return live.map((x) => (x.flight ? answers[i++]! : lost));
  }

  /** progress: reports of this call's jobs it still runs, under their leases; any other is dropped unsaid. */
  private async progress(call: Call, items: readonly ProgressReport[]): Promise<void> {
    const held = items.flatMap((i) => {
      const flight = this.held(call, i.id);
      return flight ? [{ id: i.id, token: flight.token, value: i.value }] : [];
    });
    if (held.length > 0) await this.deps.progress?.(held);
  }

  /**
   * settle: outcomes of this call's jobs it still runs (a late outcome for a job timed out, cancelled, lost
   * or settled already is ignored), in one transaction; their permits go back. Never throws.
   */
  private settle(call: Call, outcomes: readonly { id: string; outcome: HandlerOutcome }[], now: number): R[] {
    const items: { id: string; token: string; outcome: HandlerOutcome }[] = [];
    for (const { id, outcome } of outcomes) {
      const flight = this.held(call, id);
      if (!flight) continue;
      this.flights.drop(flight);
      items.push({ id, token: flight.token, outcome });
    }
    let changed: R[] = [];
    try {
      if (items.length > 0) changed = this.deps.jobs.settle(items, now);
    } catch (e) {
      // The leases stay in SQL and are not renewed: the reap pass recovers the jobs.
      console.error(JSON.stringify({ event: "dispatch:settle_failed", jobs: items.length, error: String(e) }));
    }
    for (const { id } of items) {
      for (const p of call.permits.get(id) ?? []) this.permits.release(p.pool, [p.id]);
      call.permits.delete(id);
    }
    return changed;
  }

  /**
   * settleEarly: a job the handler reported before its batch ended. Its
   * events and the re-arm go out now (coalesced per tick), not when the slowest
   * job of the batch returns — by then the object may be gone and they with it.
   */
  private settleEarly(call: Call, id: string, outcome: HandlerOutcome): void {
    this.early.push(...this.settle(call, [{ id, outcome }], this.deps.now()));
    if (this.earlyTimer) return;
    this.earlyTimer = setTimeout(() => {
      const rows = this.early;
      this.early = [];
      this.earlyTimer = null;
      this.deps.keepAlive(this.deps.changed(rows, this.deps.now()));
    }, 0);
  }

  /** finish: the call returned — settle what it did not report early, give back every permit it still holds, emit. */
  private async finish(call: Call, answer: unknown, failure: Failure | null): Promise<void> {
    const now = this.deps.now();
    const ids = [...call.tokens.keys()];
    const outcomes = failure === null ? readOutcomes(ids, answer) : null;
    // Results sealed natively before the settle's transaction (ScopePort.prepare); never fails the settle.
    if (outcomes && this.deps.jobs.prepare) await this.deps.jobs.prepare([...outcomes.values()]).catch(() => {});
    const failed: HandlerOutcome =
      failure?.unreachedWaitMs != null
        ? { kind: "retry", error: failure.error, consumesAttempt: false, retryAfterMs: failure.unreachedWaitMs }
        : { kind: "retry", error: failure?.error ?? "no outcome" };
    let changed: R[] = [];
    try {
      changed = this.settle(call, ids.map((id) => ({ id, outcome: outcomes?.get(id) ?? failed })), now);
    } finally {
      // Permits of jobs that ended earlier (timed out, cancelled, lost) were kept by the call until now.
      for (const p of [...call.permits.values()].flat()) this.permits.release(p.pool, [p.id]);
      call.permits.clear();
      // A keyed type backed off because every value was at its limit may take the values this call kept at once,
      // without waiting for a pool's poke (which comes only once a kept permit goes back: permit-ledger.ts).
      if (this.deps.jobs.keyed(call.type)) this.backoff.freed(call.type);
    }
    await this.deps.changed(changed, now);
  }

  /** abort ends a flight early and tells the handler why. Its permit stays with the call until the call returns. */
  private abort(flight: Flight<Call>, reason: AbortReason): void {
    this.flights.drop(flight);
    flight.call.control.abort(flight.id, reason);
  }

  /** timedOut: the lease ended at the timeout (claim and renewal cap it there); the reap pass settles the attempt as a timeout. */
  private timedOut(flight: Flight<Call>): void {
    this.abort(flight, "timeout");
    if (this.reapQueued) return;
    // One reap for every job that times out in the same moment (one observer call, not one per job).
    this.reapQueued = true;
    setTimeout(() => {
      this.reapQueued = false;
      this.deps.keepAlive(this.deps.reapNow());
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
    for (const flight of this.flights.all()) {
      const out = this.deps.jobs.renew(flight.id, flight.token, flight.call.leaseMs, now);
      if (!out.ok) this.abort(flight, out.reason);
    }
    const held = [...this.calls].flatMap((call) => [...call.permits.values()].flat().map((permit) => ({ permit, ttlMs: call.leaseMs * PERMIT_TTL_FACTOR })));
    if (held.length > 0) {
      const lost = new Set((await this.permits.renew(held)).map((p) => `${p.pool}\u0000${p.id}`));
      // The pool took the slot back (renewals stalled): the job may no longer run, or the pool would be over its limit.
      for (const call of this.calls) {
        for (const [id, permits] of call.permits) {
          if (!permits.some((p) => lost.has(`${p.pool}\u0000${p.id}`))) continue;
          const flight = this.held(call, id);
          if (flight) this.abort(flight, "lease_lost");
        }
      }
    }
    // Leases moved later: move the alarm with them, so it does not wake for expiries that will not happen.
    await this.deps.changed([], now);
  }
}
