/**
 * Paused types, a scope object's side (catalog/pause-store.ts has the
 * catalog's). The paused set lives in `type_pause`, so the "pending and not
 * paused" filter (`PENDING_UNPAUSED_COUNT`, scope/jobs/counts.ts) leaves those types
 * out and neither the dispatcher, a claim nor the wake-up sees their jobs;
 * enqueues still land.
 *
 * The set is only as good as the shard's promise to tell this object of a
 * change (`meta.pause_until`, renewed by every catalog report, and counted on
 * this object's clock from when it sent the call). When it has
 * lapsed — a new object, or one idle for minutes — `fresh` is false: the
 * dispatcher sees nothing due and a claim waits for `ensure`, until a sync
 * answers. A shard that cannot be reached does not stop the queue: the object
 * goes on with the set it last knew and asks again SYNC_RETRY_MS later.
 *
 * @module
 */
import type { PauseSync } from "../../catalog/pause-store";

/** A promise this close to its end counts as lapsed: room for a call's travel and the shard's own clock rate. */
export const PROMISE_MARGIN_MS = 30_000;
/** The promise's end is written to storage when it has grown this much (it lasts PAUSE_PROMISE_MS, minutes). */
const UNTIL_KEEP_STEP_MS = 60_000;
/** After a failed sync, go on with the last known set this long before asking again. */
export const SYNC_RETRY_MS = 5_000;

const META_GET = "SELECT key, value FROM meta WHERE key IN ('pause_version', 'pause_until', 'pause_from')";
const META_SET = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
const PAUSE_CLEAR = "DELETE FROM type_pause";
const PAUSE_ADD = "INSERT INTO type_pause (type) SELECT value FROM json_each(?)";
const PAUSE_LIST = "SELECT type FROM type_pause ORDER BY type";

const PAUSE_ONE = "SELECT 1 AS p FROM type_pause WHERE type = ?";

/** isPaused: as this object last heard (an inline claim checks one type inside its transaction). */
export function isPaused(sql: SqlStorage, type: string): boolean {
  return sql.exec(PAUSE_ONE, type).toArray().length > 0;
}

export interface PauseGateDeps {
  sql: SqlStorage;
  atomic<T>(fn: () => T): T;
  now(): number;
  /** Ask the home's catalog shard (Catalogs.pauseSync). */
  ask(): Promise<PauseSync>;
  /** A sync landed: the dispatcher and parked claims look again (`resumed`: types no longer paused). */
  synced(resumed: string[]): void;
  keepAlive(p: Promise<unknown>): void;
}

export class PauseGate {
  private version: number;
  private until: number;
  /** The promise's end as last written to storage. */
  private untilKept: number;
  private from: string | null;
  private retryAt = 0;
  private asking: Promise<void> | null = null;
  /** Due work waits for a sync: the alarm must come back for it if the sync is lost with the instance. */
  private holding = false;

  constructor(private readonly deps: PauseGateDeps) {
    const meta = new Map(deps.sql.exec<{ key: string; value: string }>(META_GET).toArray().map((r) => [r.key, r.value]));
    this.version = Number(meta.get("pause_version") ?? 0);
    this.until = Number(meta.get("pause_until") ?? 0);
    this.untilKept = this.until;
    this.from = meta.get("pause_from") ?? null;
  }

  /** fresh: the paused set can be trusted now (or the shard could not be asked a moment ago). */
  fresh(now: number): boolean {
    return now < this.until - PROMISE_MARGIN_MS || now < this.retryAt;
  }

  paused(): string[] {
    return this.deps.sql.exec<{ type: string }>(PAUSE_LIST).toArray().map((r) => r.type);
  }

  /** ensure: resolves once the set is fresh (a claim awaits this before leasing). */
  async ensure(): Promise<void> {
    if (!this.fresh(this.deps.now())) await this.ask();
  }

  /** refresh: start a sync if the set is stale, without waiting (the dispatcher's synchronous path, whose due work waits for it). */
  refresh(): void {
    if (this.fresh(this.deps.now())) return;
    this.holding = true;
    this.deps.keepAlive(this.ask());
  }

  /** heldBackUntil: while due work waits for a sync, the alarm comes back SYNC_RETRY_MS later (the sync may die with the instance). */
  heldBackUntil(now: number): number | null {
    if (this.holding && this.fresh(now)) this.holding = false;
    return this.holding ? now + SYNC_RETRY_MS : null;
  }

  /**
   * apply: a report's answer, a sync or a change notice, to a call sent at `askedAt` (this object's clock).
   * The promise only ever lengthens; the set is taken only from an answer at least as new as the one held
   * (a notice may overtake an older report's answer).
   */
  apply(sync: PauseSync, askedAt: number): void {
    const wasStale = !this.fresh(this.deps.now());
    const until = sync.promiseMs > 0 ? askedAt + sync.promiseMs : 0;
    if (until > this.until) {
      this.until = until;
      // Kept for a restart, which only needs it roughly: written as the shard renews it (twice an hour: catalog/pause-store.ts).
      if (until - this.untilKept >= UNTIL_KEEP_STEP_MS) {
        this.untilKept = until;
        this.deps.sql.exec(META_SET, "pause_until", String(until));
      }
    }
    // Versions count per shard: an answer from another shard (the shard count changed) starts them over. The same
    // version from the same shard is the set held already — a report's routine answer writes nothing more.
    const newer = sync.from !== this.from || sync.version > this.version;
    let resumed: string[] = [];
    if (newer) {
      const before = this.paused();
      this.deps.atomic(() => {
        this.version = sync.version;
        this.from = sync.from;
        this.deps.sql.exec(META_SET, "pause_version", String(sync.version));
        this.deps.sql.exec(META_SET, "pause_from", sync.from);
        this.deps.sql.exec(PAUSE_CLEAR);
        this.deps.sql.exec(PAUSE_ADD, JSON.stringify(sync.types));
      });
      resumed = before.filter((t) => !sync.types.includes(t));
    }
    // A stale set held dispatch back; a resume frees due work. Anything else changes nothing to run.
    if (wasStale || resumed.length > 0) this.deps.synced(resumed);
  }

  private ask(): Promise<void> {
    const askedAt = this.deps.now();
    this.asking ??= this.deps
      .ask()
      .then((sync) => this.apply(sync, askedAt))
      .catch((e: unknown) => {
        this.retryAt = this.deps.now() + SYNC_RETRY_MS;
        console.error(JSON.stringify({ event: "pause:sync_failed", error: String(e) }));
        this.deps.synced([]);
      })
      .finally(() => {
        this.asking = null;
      });
    return this.asking;
  }
}
