/**
 * Lease: a running attempt's lease as the machine running it sees it — its
 * renewals, and the deadline past which the attempt must stop because no
 * renewal was confirmed (docs/pull-workers.md "Pull workers", Leases;
 * docs/guarantees.md "Guarantees and limits"). The queue gives an expired lease's
 * job to the next claim, so a runner that cannot hear the queue must end its
 * attempt by its own clock, before then: at most one attempt runs at a time.
 *
 * The deadline is kept on this machine's clock from durations the queue granted,
 * never from its timestamps read as local times (the clocks need not agree): the
 * queue's answers say, by its clock, when the attempt started (`startedAt`) and
 * until when its lease runs (`leaseExpiresAt`, from the claim, then from each
 * confirmed renewal); the attempt started no earlier than the claim was sent.
 * So the lease ends no earlier than `sentAt + (leaseExpiresAt − startedAt)` here,
 * and the deadline keeps a margin before that for the clocks' rates and the
 * queue's stamping (a tenth of the lease, at most a second).
 *
 * Used by `createWorker` (pull-worker/attempt.ts) and `runClaimed` (client/run-claimed.ts).
 *
 * @module
 */

/** The most kept before a lease's end. */
export const LEASE_MARGIN_MAX_MS = 1_000;

/** leaseMargin: what the deadline keeps before a lease of `grantedMs` ends by the queue's clock. */
export function leaseMargin(grantedMs: number): number {
  return Math.min(LEASE_MARGIN_MAX_MS, Math.max(0, Math.floor(grantedMs / 10)));
}

/** grantedMs: the lease a claim's answer granted, by the queue's clock; `fallbackMs` when it says no start. */
export function grantedMs(job: { startedAt?: number | null; leaseExpiresAt: number }, fallbackMs: number): number {
  return job.startedAt == null ? fallbackMs : job.leaseExpiresAt - job.startedAt;
}

export interface LeaseOptions {
  /** The claim's answer, by the queue's clock. */
  job: { startedAt?: number | null; leaseExpiresAt: number };
  /** When the claim was sent, by this machine's clock (`now`): the attempt started no earlier. */
  sentAt: number;
  /** The lease asked for: taken as granted when the answer has no `startedAt`. */
  leaseMs: number;
  /** Renew this often while the lease is kept; null: only when renew() is called. */
  renewEveryMs: number | null;
  /** One renewal: resolves with the lease's new end (the queue's clock) once the queue confirmed it, else undefined. */
  heartbeat: () => Promise<number | undefined>;
  /** The deadline passed with no renewal confirmed past it. Called once; the lease is over. */
  onLapse: () => void;
  now?: () => number;
}

export class Lease {
  /** When the attempt started, by the queue's clock. */
  private readonly startedAt: number;
  /** The end of the latest confirmed lease, by the queue's clock. */
  private expiresAt: number;
  private readonly margin: number;
  private readonly now: () => number;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private over = false;

  constructor(private readonly o: LeaseOptions) {
    const granted = grantedMs(o.job, o.leaseMs);
    this.startedAt = o.job.leaseExpiresAt - granted;
    this.expiresAt = o.job.leaseExpiresAt;
    this.margin = leaseMargin(granted);
    this.now = o.now ?? Date.now;
    if (o.renewEveryMs !== null) this.renewTimer = setInterval(() => void this.renew(), o.renewEveryMs);
    this.arm();
  }

  /** deadline: when the attempt must have stopped, by this machine's clock. */
  get deadline(): number {
    return this.o.sentAt + (this.expiresAt - this.startedAt) - this.margin;
  }

  /** lapsed: the deadline passed before a renewal was confirmed past it. */
  lapsed = false;

  /** confirm: the queue renewed the lease until `leaseExpiresAt` (its clock). Answers out of order never shorten it. */
  confirm(leaseExpiresAt: number): void {
    if (this.over || !(leaseExpiresAt > this.expiresAt)) return;
    this.expiresAt = leaseExpiresAt;
    this.arm();
  }

  /** renew: one heartbeat now; a confirmed one moves the deadline. */
  async renew(): Promise<void> {
    if (this.over) return;
    const at = await this.o.heartbeat();
    if (at !== undefined) this.confirm(at);
  }

  /** stopRenewing: the attempt's work is done; the deadline still holds for what it writes last. */
  stopRenewing(): void {
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  /** end: the lease is no longer this runner's concern (settled, lost or given back). */
  end(): void {
    this.over = true;
    this.stopRenewing();
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }

  private arm(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    // The timer, not a clock read when it fires, says the time has passed (a confirmed renewal re-arms it): a wall
    // clock set back meanwhile cannot hold the lapse off.
    this.deadlineTimer = setTimeout(() => {
      if (this.over) return;
      this.lapsed = true;
      this.end();
      this.o.onLapse();
    }, Math.max(0, this.deadline - this.now()));
  }
}
