/**
 * What a write of a scope object changed, as data (docs/design.md "One
 * commit path"). Every write operation returns its answer and one of these;
 * `FollowUps.run` (follow-ups.ts) does what the record calls for, always in the
 * same order, so no RPC method picks its own follow-ups. Which parked claims
 * wake is derived from the rows the record names, never chosen by the caller.
 *
 * @module
 */
import type { JobRow } from "./job-row";
import type { FeedItem } from "./feed";

/**
 * How soon a change must reach the catalog (report/catalog-report.ts): `urgent` skips the pause after a send (new
 * work of a type others wait for), `now` goes at once unless a summary went out less than REPORT_MIN_INTERVAL_MS
 * ago, `hold` waits REPORT_HOLD_MS for the rest of its burst.
 */
export type ReportUrgency = "urgent" | "now" | "hold";

export interface Changes {
  /** Rows whose new state is a lifecycle event (`job:started`, `job:completed`, …): emitted, as they now read. */
  readonly events: readonly JobRow[];
  /** Rows the write changed that are no lifecycle event: created jobs, jobs retried by hand, a duplicate's debounce. */
  readonly quiet: readonly JobRow[];
  /** Jobs the write created (the `enqueued` analytics point). Also in `quiet` or `events`. */
  readonly created: readonly JobRow[];
  /** Jobs given back unrun (`job:released`), and why. */
  readonly released: { readonly rows: readonly JobRow[]; readonly reason: string } | null;
  /** Holders' writes refused because they no longer hold the job (`job:lease_lost`, naming the write). */
  readonly leaseLost: readonly { readonly row: JobRow; readonly write: string; readonly reason: string }[];
  /** Jobs whose holder reported progress (`job:progress`): their watchers and the observer hear of it. */
  readonly progressed: readonly JobRow[];
  /** Jobs whose running handler call must see its signal abort (cancelled). */
  readonly aborted: readonly string[];
  /** Attempts the reap pass ended: their calls are aborted and one `reaper:recovered` summary told. In `events` too. */
  readonly reaped: readonly JobRow[];
  /**
   * Whether pulled attempts' permits may have come free (the return pass runs), and the lease, if any, whose
   * permits go back with their rate spend refunded (a release: the attempt never ran).
   */
  readonly permits: { readonly refundLease: { readonly id: string; readonly token: string } | null } | null;
  /** A heartbeat's renewal of its lease's permits. */
  readonly renew: { readonly id: string; readonly token: string; readonly ttlMs: number } | null;
  /** Whether push work may have come due: the dispatcher fills. */
  readonly fill: boolean;
  /** How soon the catalog must hear of it; null when nothing it counts changed. */
  readonly report: ReportUrgency | null;
  /** Whether the alarm is set anew. */
  readonly arm: boolean;
  /**
   * What the write gathered in its transaction beyond rows (feed.ts): steps and log lines for the live
   * subscriptions, and whether it owed another object something. The commit path fills it in (follow-ups.ts).
   */
  readonly gathered: { readonly fed: readonly FeedItem[]; readonly owed: boolean };
}

/** A write's answer, and what it changed. */
export interface Written<A> {
  readonly answer: A;
  readonly changes: Changes;
}

const NOTHING: Changes = {
  events: [],
  quiet: [],
  created: [],
  released: null,
  leaseLost: [],
  progressed: [],
  aborted: [],
  reaped: [],
  permits: null,
  renew: null,
  fill: false,
  report: null,
  arm: false,
  gathered: { fed: [], owed: false },
};

/** nothing: a write that changed nothing (refused, or found nothing to do). */
export function nothing(): Changes {
  return NOTHING;
}

/** changed: a committed change — told to the catalog (`now`) and the alarm set anew, unless `parts` say otherwise. */
export function changed(parts: Partial<Changes>): Changes {
  return { ...NOTHING, report: "now", arm: true, ...parts };
}

/** written: an answer with its record. */
export function written<A>(answer: A, changes: Changes): Written<A> {
  return { answer, changes };
}

/** rowsOf: every row the record names — those whose new state may wake claims parked for their type. */
export function rowsOf(c: Changes): JobRow[] {
  return [...c.events, ...c.quiet, ...(c.released?.rows ?? [])];
}
