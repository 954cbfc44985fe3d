/**
 * Telling the catalog what this object holds, off the hot path (DESIGN.md §2):
 *
 * - every write transaction calls `touched()`; the first one after a clean
 *   report also persists `catalog_dirty_since`, in the same transaction;
 * - after the commit, `kick()` sends a summary at once unless one went out
 *   less than REPORT_MIN_INTERVAL_MS ago; changes that land meanwhile are left
 *   to the alarm, armed at `deadline()`, so a busy object sends about one
 *   summary per interval whatever its write rate;
 * - a summary that covers every change clears the persisted mark;
 * - a change no reader waits for (push jobs enqueued, leased or settled, of
 *   types no `waitsFor` names: `kick("hold")`) waits REPORT_HOLD_MS from the
 *   first such change, so a burst that starts and ends within it goes out as
 *   one summary, not two (stats are documented as up to a second behind).
 *   Pulled jobs and awaited types are told at once: claims and waiters read
 *   the catalog.
 *
 * If the object is evicted or the catalog call fails, the mark is still there
 * and the alarm reports at `dirtySince + REPORT_GRACE_MS`. Summaries are whole
 * snapshots, so sending one twice is harmless. No timers: nothing here keeps an
 * idle object awake.
 *
 * @module
 */
import type { ReportUrgency } from "../jobs/changes";
import type { HomeSummary } from "./summary";

export const REPORT_MIN_INTERVAL_MS = 1000;
/** A change no reader waits for waits this long for the rest of its burst (`kick("hold")`). */
export const REPORT_HOLD_MS = 1000;

export const REPORT_GRACE_MS = 10_000;
/** After a failed send, the next try waits this long (the catalog may be overloaded). */
export const REPORT_RETRY_MS = 5_000;

const META_GET = "SELECT value FROM meta WHERE key = 'catalog_dirty_since'";
const META_SET = "INSERT INTO meta (key, value) VALUES ('catalog_dirty_since', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
const META_CLEAR = "DELETE FROM meta WHERE key = 'catalog_dirty_since'";

export interface ReporterDeps {
  sql: SqlStorage;
  now(): number;
  /** `unreportedSince`: the first change the catalog may not have (its counters' minutes go with the summary). */
  build(unreportedSince: number | null): HomeSummary;
  send(summary: HomeSummary): Promise<void>;
  /** Keeps the object alive for a report that outlives the request (ctx.waitUntil). */
  keepAlive(p: Promise<unknown>): void;
  /** The deadline moved (a report went out): re-arm the alarm. */
  rearm(): Promise<void>;
}

/** untoldChanges: the last instance left changes the catalog may not have heard of (its persisted mark): read at start. */
export function untoldChanges(sql: SqlStorage): boolean {
  return sql.exec(META_GET).toArray().length > 0;
}

export class CatalogReporter {
  private version = 0;
  private sentVersion = 0;
  private lastSentAt: number | null = null;
  private retryAt: number | null = null;
  /** A change that should not wait for the coalescing pause arrived while a send was in flight. */
  private urgent = false;
  /** When the first change held for its burst (`kick("hold")`) came, or null: the alarm sends REPORT_HOLD_MS later. */
  private heldSince: number | null = null;
  /** A change not to be held (`now`, `urgent`) is not in a summary yet: nothing waits for a burst then. */
  private owed = false;
  private inflight: Promise<void> | null = null;
  private dirtySince: number | null;
  /**
   * When the last summary the catalog took was built: it held every change up
   * to then. Under steady load `dirtySince` is never cleared (a write always
   * lands during a send), so this, not it, bounds what the next one must carry.
   */
  private coveredUntil: number | null = null;

  constructor(private readonly deps: ReporterDeps) {
    const row = deps.sql.exec<{ value: string }>(META_GET).toArray()[0];
    this.dirtySince = row ? Number(row.value) : null;
    if (this.dirtySince !== null) this.version = 1;
  }

  /** touched: the summary changed. Call inside the write's transaction. */
  touched(now: number): void {
    this.version++;
    if (this.dirtySince === null) {
      this.dirtySince = now;
      this.deps.sql.exec(META_SET, String(now));
    }
  }

  /** dirtyMark: the persisted mark's state before a transaction; `restore` it when the transaction rolls back (its write with it). */
  dirtyMark(): number | null {
    return this.dirtySince;
  }

  restore(mark: number | null): void {
    this.dirtySince = mark;
  }

  /** deadline: when the alarm must send a summary, or null when the catalog is up to date. */
  deadline(): number | null {
    if (this.dirtySince === null) return null;
    // A send in flight re-arms when it lands; until then only the grace deadline stands.
    if (this.inflight) return this.dirtySince + REPORT_GRACE_MS;
    let at = this.lastSentAt !== null && this.sentVersion < this.version ? this.lastSentAt + REPORT_MIN_INTERVAL_MS : this.dirtySince + REPORT_GRACE_MS;
    if (!this.owed && this.heldSince !== null) at = Math.max(this.heldSince + REPORT_HOLD_MS, this.lastSentAt === null ? -Infinity : this.lastSentAt + REPORT_MIN_INTERVAL_MS);
    if (this.retryAt !== null) at = Math.max(at, this.retryAt);
    return at;
  }

  /** unreportedSince: the first change the catalog may not have, or null when it has them all. */
  unreportedSince(): number | null {
    if (this.dirtySince === null) return null;
    return this.coveredUntil === null ? this.dirtySince : Math.max(this.dirtySince, this.coveredUntil);
  }

  /** lastSent: when the last summary went out from this instance, or null. */
  lastSent(): number | null {
    return this.lastSentAt;
  }

  /**
   * kick: after a commit, send now unless a summary is in flight, went out very
   * recently, or just failed, or the change may be held for its burst (then the
   * alarm will). `urgent` (new work of a type others wait for) skips the
   * coalescing pause: the sooner the catalog knows, the sooner waiting types
   * hold back.
   */
  kick(urgency: ReportUrgency = "now"): void {
    if (this.sentVersion >= this.version) return;
    const urgent = urgency === "urgent";
    this.owed ||= urgency !== "hold";
    const now = this.deps.now();
    // Counted from the first held change, even one that came while a send was in flight (that send may not carry it).
    if (!this.owed) this.heldSince ??= now;
    if (this.inflight) {
      this.urgent ||= urgent;
      return;
    }
    if (!this.owed && this.heldSince !== null && now < this.heldSince + REPORT_HOLD_MS) return;
    if (!urgent && this.lastSentAt !== null && now - this.lastSentAt < REPORT_MIN_INTERVAL_MS) return;
    if (this.retryAt !== null && now < this.retryAt) return;
    const p = this.send().catch((e) => {
      console.error(JSON.stringify({ event: "catalog:report_failed", error: String(e) }));
    });
    this.deps.keepAlive(p);
  }

  /** forget: the catalog cannot be told (the object does not know its name): clear the mark, so the alarm stops asking. */
  forget(): void {
    if (this.dirtySince === null) return;
    this.dirtySince = null;
    this.heldSince = null;
    this.owed = false;
    this.sentVersion = this.version;
    this.deps.sql.exec(META_CLEAR);
  }

  /** flush: resolves once every change so far has reached the catalog; `force` sends even when clean. Throws if the call fails. */
  async flush(force = false): Promise<void> {
    if (this.inflight) await this.inflight.catch(() => undefined);
    if (force || this.sentVersion < this.version) await this.send();
  }

  private send(): Promise<void> {
    const p = this.sendOnce();
    this.inflight = p;
    return p.finally(() => {
      if (this.inflight === p) this.inflight = null;
    });
  }

  private async sendOnce(): Promise<void> {
    await Promise.resolve(); // let send() record this call as in flight before anything can fail
    const v = this.version;
    let failure: unknown = null;
    // This summary carries every change so far, the held ones too; if it fails, they are held or owed as before.
    const held = this.heldSince;
    const owed = this.owed;
    this.heldSince = null;
    this.owed = false;
    try {
      const summary = this.deps.build(this.unreportedSince());
      await this.deps.send(summary);
      this.coveredUntil = summary.at;
      this.lastSentAt = this.deps.now();
      this.retryAt = null;
      this.sentVersion = Math.max(this.sentVersion, v);
      if (this.sentVersion >= this.version && this.dirtySince !== null) {
        this.dirtySince = null;
        this.deps.sql.exec(META_CLEAR);
      }
    } catch (e) {
      failure = e;
      this.retryAt = this.deps.now() + REPORT_RETRY_MS;
      this.heldSince = held ?? this.heldSince;
      this.owed ||= owed;
    }
    this.inflight = null; // the deadline below must no longer assume a send in flight
    await this.deps.rearm();
    if (failure !== null) throw failure;
    if (this.urgent) {
      this.urgent = false;
      this.kick("urgent");
    }
  }
}
