/**
 * The pull capability (capability.ts): claims by pull workers (pull-permits.ts
 * takes guarded types' permits first), their leases' permits renewed and
 * returned (lease-permits.ts), and the parked claims of pulled types told
 * when work comes due here (wait-notify.ts). A cancel keeps a running job's
 * permits until its lease would have ended (its hook).
 *
 * @module
 */
import type { QueueConfig } from "../../config/schema";
import type { PoolApi } from "../../pool/permit-plan";
import { guarded } from "../../pool/permit-plan";
import type { AlarmPass, Capability, WakeRow } from "../jobs/capability";
import { earliest } from "../jobs/capability";
import type { Changes } from "../jobs/changes";
import type { ClaimRequest } from "../jobs/claim";
import { pendingTypes } from "../jobs/counts";
import { gatheringsOver, nextGatherEnd } from "../jobs/gathering";
import type { HomeStore } from "../jobs/home-store";
import type { JobHooks } from "../jobs/job-hooks";
import type { JobRow } from "../jobs/job-row";
import { LeasePermits } from "./lease-permits";
import { holdPermits, holdPermitsOfKeys, type PullClaimDeps } from "./pull-permits";
import { WaitNotifier } from "./wait-notify";

export interface PullDeps {
  store: HomeStore;
  pool(name: string): PoolApi;
  now(): number;
  keepAlive(p: Promise<unknown>): void;
  /** Tell the parked claims of a pulled type (its wait object) that it has due work here. */
  notify(type: string): Promise<unknown>;
}

export class Pull implements Capability {
  readonly name = "pull";
  readonly permits: LeasePermits;
  /** Tells parked pull claims of due work (tests put their own in its place). */
  waits: WaitNotifier;
  /** The pushed types, as a set: every write's rows are looked up in it. */
  private readonly pushed: ReadonlySet<string>;
  readonly hooks: Partial<JobHooks> = {
    cancelling: (store, which) => {
      if (which === null) holdPermits(store.sql, null);
      else if ("ids" in which) for (const id of which.ids) holdPermits(store.sql, id);
      else holdPermitsOfKeys(store.sql, which.type, which.keys);
    },
  };
  readonly wakeColumns = { hold: "(SELECT min(hold_until) FROM job_permit)" };

  constructor(private readonly d: PullDeps) {
    this.permits = new LeasePermits({ store: d.store, pool: d.pool, now: d.now, keepAlive: d.keepAlive });
    this.waits = new WaitNotifier(d.notify, d.keepAlive);
    this.pushed = new Set(d.store.config.pushTypes);
  }

  /** claim: a pull claim — never of push types (those belong to their handler); guarded types take permits first. */
  claim(req: ClaimRequest, rest: Pick<PullClaimDeps, "holder" | "busyType">): Promise<JobRow[]> {
    return this.permits.claim({ ...req, exclude: this.d.store.config.pushTypes }, rest);
  }

  /** poke: a pool freed a slot; claims parked for guarded pulled types with work here look again. */
  poke(pool: string | undefined, now: number): void {
    const config = this.d.store.config;
    if (pool === undefined) this.permits.turns.unblockAll();
    else this.permits.turns.unblockPool(pool);
    this.waits.due(this.pendingPulled().filter((t) => guarded(config, t)), now);
  }

  /** pendingPulled: the pulled types with pending jobs here. */
  pendingPulled(): string[] {
    return pendingTypes(this.d.store.sql).filter((t) => !this.pushed.has(t));
  }

  /** Permits renewed with a heartbeat, or returned (awaited: a pull worker's slot is free once its settle answers); claims woken. */
  follow(c: Changes, rows: readonly JobRow[], now: number): Promise<void> | void {
    if (!c.renew && !c.permits) return this.wake(rows, now);
    return this.permitsOf(c).then(() => this.wake(rows, now));
  }

  private async permitsOf(c: Changes): Promise<void> {
    if (c.renew) await this.permits.renew(c.renew.id, c.renew.token, c.renew.ttlMs);
    if (c.permits) await this.permits.returnFree(c.permits.refundLease);
  }

  private wake(rows: readonly JobRow[], now: number): void {
    const types = wakeTypes(this.d.store.config, this.pushed, rows, now);
    if (types.size > 0) this.waits.due(types, now);
  }

  nextWake(row: WakeRow, now: number): number | null {
    return earliest([row.hold, nextGatherEnd(this.d.store, now)]);
  }

  /**
   * Pulled jobs whose delay or backoff ended, and pulled batch types whose gathering ended (gathering.ts): their
   * parked claims look again. Then the permits of what the pass ended, and any a crashed instance left after a settle.
   */
  async alarm(pass: AlarmPass): Promise<void> {
    const { store } = this.d;
    this.waits.due(new Set([...(pass.cameDue ?? []).filter((t) => !this.pushed.has(t)), ...gatheringsOver(store, pass.now)]), pass.now);
    await this.permits.returnFree(null);
  }
}

/**
 * wakeTypes: pulled types whose claims may now find work — a row pending and due, a keyed row that stopped running
 * (its key's follower may be free; when there was none, the woken claim finds nothing and parks again), or an
 * ordered type's head that stopped running (the job behind it is next), or an expired job (a claim that took it for a
 * candidate before the alarm ended it found nothing: expiry.ts). Pushed types are this object's own to dispatch.
 */
export function wakeTypes(config: QueueConfig, pushed: ReadonlySet<string>, rows: readonly JobRow[], now: number): Set<string> {
  const types = new Set<string>();
  for (const r of rows) {
    if (pushed.has(r.type)) continue;
    const freed = r.state === "expired" || (r.state !== "running" && (r.dedupe_key !== null || config.typeSettings(r.type).ordered));
    if ((r.state === "pending" && r.run_at <= now) || freed) types.add(r.type);
  }
  return types;
}
