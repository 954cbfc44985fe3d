/**
 * The push capability (capability.ts): the dispatcher that calls the
 * handler Workers of pushed types (dispatch/dispatcher.ts) over this object's
 * SQLite (dispatch-port.ts). After a commit it aborts the calls of cancelled
 * or reaped jobs and looks for due push work; the alarm is its timer for
 * delayed and retried jobs; a fresh instance gives back the attempts the one
 * before it had in flight (orphans.ts).
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import { Dispatcher, type Origin } from "../../dispatch/dispatcher";
import type { HandlerEntrypoint } from "../../job/handler-contract";
import { withTimeout } from "../../deadlines";
import { permitPlan, POOL_CALL_TIMEOUT_MS, type PoolApi } from "../../pool/permit-plan";
import type { Capability } from "../jobs/capability";
import { earliest } from "../jobs/capability";
import { changed, nothing, type Changes, type Written } from "../jobs/changes";
import { jobWrites, reportFor } from "../jobs/job-writes";
import type { JobRow } from "../jobs/job-row";
import type { WakeMemo } from "../jobs/wake-memo";
import type { WorkflowStore } from "../workflow/workflow-store";
import { dispatchPort, reapedFlights } from "./dispatch-port";
import { pushWrites } from "./push-writes";
import { holdRetry, leasedStraight, startable } from "./straight";
import type { JobHooks } from "../jobs/job-hooks";

export interface PushDeps {
  store: WorkflowStore;
  memo: WakeMemo;
  now(): number;
  home(): string;
  keepAlive(p: Promise<unknown>): void;
  handler(binding: string): HandlerEntrypoint;
  pool(name: string): PoolApi;
  /** Whether the paused set may be trusted now (jobs/pause-gate.ts); if not, a sync starts. */
  pauseFresh(now: number): boolean;
  invocationsPerCall: number;
  busyType(types: string[]): Promise<string | null>;
  /** Runs a write through the commit path. */
  write<A>(op: (now: number) => Written<A>): Promise<A>;
  /** Runs what follows rows the dispatcher's own claims and settles changed (events, catalog, alarm). */
  commit(changes: Changes, now: number): Promise<void>;
  progress(items: { id: string; token: string; value: string }[]): Promise<void>;
  /** Whether anyone watches here now: a pushed call's journaled steps are then fed to them. */
  watched(): boolean;
}

export class Push implements Capability {
  readonly name = "push";
  readonly dispatcher: Dispatcher<JobRow>;

  constructor(private readonly d: PushDeps) {
    const config: QueueConfig = d.store.config;
    this.dispatcher = new Dispatcher<JobRow>({
      jobs: dispatchPort(d.store, config, d.pauseFresh, d.memo),
      config,
      now: d.now,
      home: d.home,
      handler: d.handler,
      pool: d.pool,
      keepAlive: d.keepAlive,
      invocationsPerCall: d.invocationsPerCall,
      // The dispatcher's own claims and settles of pushed jobs: events, catalog and alarm as for any write.
      changed: (rows, at) => d.commit(changed({ events: rows, report: reportFor(d.store, rows) }), at),
      busyType: d.busyType,
      reapNow: async () => void (await d.write((at) => jobWrites.reap(d.store, at))),
      progress: d.progress,
      // A pushed call's steps were written outside a write's record: the commit path takes what the feed gathered.
      journaled: () => {
        if (d.watched()) void d.commit(nothing(), d.now());
      },
    });
  }

  /** The event budget of a write whose straight calls `told` started: its fill goes on within the same (follow). */
  private readonly origins = new WeakMap<Changes, Origin>();

  /**
   * A pushed attempt ended by any write is forgotten at once; cancelled and reaped jobs' calls see their signal abort.
   * The calls of jobs the write inserted straight to a handler start here, synchronously after its commit, so no
   * other write takes the room the enqueue counted on (straight.ts).
   */
  told(c: Changes, _rows: readonly JobRow[], now: number): void {
    this.d.store.pushed.note(c.events);
    if (c.created.length > 0) {
      const straight = leasedStraight(c.created, now, this.d.store.lens);
      if (straight.size > 0) {
        const origin = this.dispatcher.newOrigin();
        for (const [type, leased] of straight) this.dispatcher.startLeased(type, leased, origin);
        this.origins.set(c, origin);
      }
    }
    for (const id of c.aborted) this.dispatcher.cancelled(id);
    if (c.reaped.length > 0) this.dispatcher.reaped(reapedFlights(c.reaped, now));
  }

  /** In a core write's transaction: how many new jobs of a type may go straight to a handler (straight.ts). */
  readonly hooks: Partial<JobHooks> = {
    startable: (store, type, now) => startable(store, this.dispatcher, this.d.pauseFresh, type, now),
    holdRetry: (store, row) => holdRetry(store, row),
  };

  /** The dispatcher looks for due push work (not awaited: it may wait on a pool), `fresh` for the types the write made pending. */
  follow(c: Changes, rows: readonly JobRow[]): void {
    if (!c.fill) return;
    this.dispatcher.fresh(rows.flatMap((r) => (r.state === "pending" ? [r.type] : [])));
    void this.dispatcher.fill(this.origins.get(c) ?? this.dispatcher.newOrigin());
  }

  /** Pushed attempts' leases are held in memory, not in job_lease_idx (jobs/pushed-leases.ts); and the dispatcher's own times. */
  nextWake(_row: unknown, now: number): number | null {
    return earliest([this.d.store.pushed.earliest(now), this.dispatcher.wakeAt(now)]);
  }

  /** The alarm is the safety net and the timer for delayed and retried push jobs. */
  async alarm(): Promise<void> {
    await this.dispatcher.fill(this.dispatcher.newOrigin());
  }

  /** poke: a pool freed a slot this object waited for. */
  async poke(pool: string | undefined): Promise<void> {
    this.dispatcher.unblock(pool);
    await this.dispatcher.fill(this.dispatcher.newOrigin());
  }

  /**
   * start: pushed attempts of the previous instance have no call any more — given back now, unspent (orphans.ts).
   * Their permits lived in the dead instance's memory: the pools they came from drop what it held, so a limit it
   * filled is free at once (docs/design.md "Restart"). Answers whether any were given back (the alarm is set for now).
   */
  async giveBackOrphans(): Promise<boolean> {
    const { d } = this;
    const orphans = await d.write((at) => pushWrites.orphans(d.store, at));
    if (orphans.n === 0) return false;
    const home = d.home();
    console.log(JSON.stringify({ event: "dispatch:released_orphans", home, jobs: orphans.n }));
    const pools = new Set(orphans.rows.flatMap((r) => permitPlan(d.store.config, r.type, r.limit_key).map((s) => s.pool)));
    // Not awaited: nothing here needs the answers.
    for (const p of pools) {
      d.keepAlive(
        withTimeout(d.pool(p).dropStale?.(home, this.dispatcher.epoch) ?? Promise.resolve(), POOL_CALL_TIMEOUT_MS).catch((e: unknown) =>
          console.error(JSON.stringify({ event: "pool:drop_stale_failed", pool: p, error: String(e) })),
        ),
      );
    }
    return true;
  }
}
