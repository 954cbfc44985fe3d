/**
 * What follows a scope object's committed write, run from its record
 * (changes.ts) by one function, always in one order (docs/design.md "One
 * commit path"):
 *
 * 1. events — lifecycle events, `enqueued` points, releases, lease losses, progress, the reap summary; then the
 *    live subscriptions that follow the rows (watchers.ts), and the spans (tracing.ts: buffered, sent later);
 * 2. aborts — running handler calls of cancelled or reaped jobs see their signal abort;
 * 3. permits — pulled leases' permits renewed, or returned (awaited: a pull
 *    worker's slot is free once its settle answers);
 * 4. wake-ups — claims parked for a pulled type with due work here wake;
 * 5. fill — the dispatcher looks for due push work (not awaited: it may wait on a pool);
 * 6. outbox — what the write owed other objects is sent (not awaited; outbox.ts): the store marks an `owe`, a
 *    child's row ending says it by itself; then the completion callbacks of jobs that ended (callbacks.ts);
 * 7. catalog — the report is kicked (before arming: a report in flight moves the deadline the alarm waits for);
 * 8. alarm — set anew for the next wake-up.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { rowsOf, type Changes } from "./jobs/changes";
import type { ReportUrgency } from "./report/catalog-report";
import { reapedFlights } from "./push/dispatch-port";
import type { EventSink } from "./watching/events";
import type { JobRow } from "./jobs/job-row";
import type { LeasePermits } from "./pull/lease-permits";
import type { Watchers } from "./watching/watchers";
import type { FeedItem } from "./jobs/feed";
import type { Tracing } from "./watching/tracing";

export interface FollowUpDeps {
  config: QueueConfig;
  events: Pick<EventSink, "enqueued" | "emit" | "released" | "leaseLost" | "reaped" | "progress">;
  /** This object's name, for the reap summary ("?" for an object that has none yet). */
  home(): string;
  dispatcher: {
    cancelled(id: string): void;
    reaped(flights: { id: string; timedOut: boolean }[]): void;
    /** `due`: the types of rows the write made pending (a keyed type's turn looks for new key values). */
    fillNow(due: readonly string[]): void;
  };
  permits: Pick<LeasePermits, "renew" | "returnFree">;
  /** The object's live subscriptions (watchers.ts): each hears of the rows it follows. */
  watchers: Pick<Watchers, "changed">;
  /** The jobs' OpenTelemetry spans (tracing.ts). */
  tracing: Pick<Tracing, "changed">;
  /** The steps and log lines writes gathered for the watchers since last asked (feed.ts); asking takes them. */
  feed(): FeedItem[];
  /**
   * Rows a write changed: the sweep of completed jobs learns when they pass their retention (completed-sweep.ts), and
   * the pushed leases held in memory follow them (pushed-leases.ts).
   */
  ended(rows: readonly JobRow[]): void;
  /** Tell the claims parked for these pulled types (wait-notify.ts). */
  wake(types: Iterable<string>, now: number): void;
  report(urgency: ReportUrgency): void;
  arm(now: number): Promise<void>;
  /** Send what this object owes others (outbox.ts), without waiting. */
  sendOwed(): void;
  /** Post the completion callbacks jobs that ended owe (callbacks.ts), without waiting. */
  callBack(): void;
  /** Whether a write owed others something since last asked (HomeStore.owed, outbox.ts owe); asking clears it. */
  takeOwed(): boolean;
}

export class FollowUps {
  /** The pushed types, as a set: every dispatched batch's rows are looked up in it. */
  private readonly pushed: ReadonlySet<string>;

  constructor(private readonly deps: FollowUpDeps) {
    this.pushed = new Set(deps.config.pushTypes);
  }

  async run(c: Changes, now: number): Promise<void> {
    const d = this.deps;
    d.ended(c.events);
    d.events.enqueued(c.created);
    d.events.emit(c.events, now);
    if (c.released) d.events.released(c.released.rows, now, c.released.reason);
    for (const l of c.leaseLost) d.events.leaseLost(l.row, now, l.write, l.reason);
    if (c.progressed.length > 0) d.events.progress(c.progressed, now);
    // What watches from outside never fails the write that told it, nor each other: the rest still run.
    const rows = rowsOf(c);
    outside("watchers", () => d.watchers.changed(rows, c.progressed, d.feed()));
    outside("tracing", () => d.tracing.changed(c.created, c.events, now));
    // Only with something reaped is the name asked: for an object older than name keeping, asking reads a row.
    if (c.reaped.length > 0) d.events.reaped(d.home(), c.reaped, now);
    for (const id of c.aborted) d.dispatcher.cancelled(id);
    if (c.reaped.length > 0) d.dispatcher.reaped(reapedFlights(c.reaped, now));
    if (c.renew) await d.permits.renew(c.renew.id, c.renew.token, c.renew.ttlMs);
    if (c.permits) await d.permits.returnFree(c.permits.refundLease);
    const types = wakeTypes(d.config, this.pushed, rows, now);
    if (types.size > 0) d.wake(types, now);
    if (c.fill) d.dispatcher.fillNow(rows.flatMap((r) => (r.state === "pending" ? [r.type] : [])));
    // What the write owed also sets the alarm (outbox.ts: its rows' next_at), even for a write that arms nothing else.
    const owed = d.takeOwed();
    if (owed || endsChildren(c.events)) d.sendOwed();
    if (owesCallback(c.events)) d.callBack();
    if (c.report) d.report(c.report);
    if (c.arm || owed) await d.arm(now);
  }
}

/**
 * endsChildren: rows of children that ended — each owed its parent a word, written by a trigger (job_child_end),
 * not through `owe`, so the store's mark does not see it.
 */
export function endsChildren(rows: readonly JobRow[]): boolean {
  return rows.some((r) => r.finished_at !== null && r.parent_id !== null);
}

/** outside: one of the outside watchers told of a write; a failure is logged, not thrown into the commit path. */
function outside(what: string, tell: () => void): void {
  try {
    tell();
  } catch (e) {
    console.error(JSON.stringify({ event: "watch:failed", what, error: String(e) }));
  }
}

/** owesCallback: rows of jobs with a callback that ended — the job_callback trigger owed it (callbacks.ts). */
export function owesCallback(rows: readonly JobRow[]): boolean {
  return rows.some((r) => r.finished_at !== null && typeof r.callback === "string");
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
