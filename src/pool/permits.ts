/**
 * The permits of one pool, over its SQLite: grant, renew, release, expire —
 * and the waiting line. One pool object serves three kinds of budget, all the
 * same mechanism:
 *
 * - concurrency: the summed `cost` of live permits stays within the limit;
 * - rate: a fixed one-minute window of spend (`ratePerMinute`), or GCRA
 *   (`rate`, pool/rate.ts), charged per attempt start (a retry spends again;
 *   spend for an attempt that never started is refunded);
 * - exclusion (notWhileRunning): no grant while a permit of a named type is live.
 *
 * Fairness: a holder refused a permit joins a waiting line. Each slot that
 * frees is kept for the longest waiter for RESERVE_MS and the waiter is told
 * (poked), so a busy holder that asks again at once cannot take it first.
 *
 * Plain synchronous functions: each call is one transaction.
 *
 * @module
 */

import type { RateSettings } from "../config/limits";
import { drained, readyAt, refund as gcraRefund, spend as gcraSpend, type RateState } from "./rate";

export interface PoolLimits {
  concurrency: number | null;
  ratePerMinute: number | null;
  /** GCRA (pool/rate.ts); set only by the config (absent: none). */
  rate?: RateSettings | null;
}

export interface AcquireRequest {
  holder: string;
  /** The job type whose attempts will hold the permits. */
  type: string;
  /** Jobs wanted: one permit each. */
  want: number;
  cost: number;
  rateCost: number;
  ttlMs: number;
  /** The configured limits; a limit set at runtime (PUT /v1/pools/{name}) takes precedence. */
  limits: PoolLimits;
  /** No grant while a permit of one of these types is live. */
  excludeTypes: readonly string[];
  /** The pushing scope object's instance: permits of the holder under another one are a dead instance's. */
  epoch?: string | null;
}

export type BlockedBy = "concurrency" | "rate" | { type: string };

export interface Grant {
  permits: string[];
  /** Fewer than wanted: try again no later than this (a poke also comes when a slot frees). */
  retryAfterMs: number;
  blockedBy: BlockedBy | null;
  /** Holders to poke: slots freed for them. */
  wake: string[];
}

export const WINDOW_MS = 60_000;
/** How long a freed slot is kept for the waiter it was offered to. */
export const RESERVE_MS = 2_000;
export const RETRY_MIN_MS = 50;
export const RETRY_MAX_MS = 5_000;
/** A waiter that has not asked for this long has given up (a refused holder asks again within RETRY_MAX_MS). */
export const WAITER_TTL_MS = 30_000;

const LIVE_COST = "SELECT coalesce(sum(cost), 0) AS units, count(*) AS n FROM permit";
const PERMIT_INSERT = "INSERT INTO permit (id, holder, expires_at, type, cost, rate_cost, window_start, epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
/** Pushed permits a dead instance of the holder left: its calls died with it (scope/push/orphans.ts re-runs their jobs). */
const PERMIT_TAKE_STALE = "DELETE FROM permit WHERE holder = ? AND epoch IS NOT NULL AND epoch != ? RETURNING cost";
const PERMIT_RENEW = "UPDATE permit SET expires_at = ? WHERE id IN (SELECT value FROM json_each(?)) RETURNING id";
const PERMIT_TAKE = "DELETE FROM permit WHERE id IN (SELECT value FROM json_each(?)) RETURNING cost, rate_cost, window_start";
/** permitTakeExpired: permit_expires_idx. */
const PERMIT_TAKE_EXPIRED = "DELETE FROM permit WHERE expires_at <= ? RETURNING cost";
const PERMIT_NEXT_EXPIRY = "SELECT min(expires_at) AS t FROM permit";
const PERMIT_OF_TYPES = "SELECT type FROM permit WHERE type IN (SELECT value FROM json_each(?)) LIMIT 1";
/** A waiter is a holder waiting to run one type: a scope may wait for several types, each keeps its own place. */
const WAITER_UPSERT = "INSERT INTO waiter (holder, type, since, seen_at) VALUES (?1, ?2, ?3, ?3) ON CONFLICT (holder, type) DO UPDATE SET seen_at = ?3";
/** Served in part: to the back of the line, so a holder with a long backlog cannot keep the head of it. */
const WAITER_REQUEUE = "INSERT INTO waiter (holder, type, since, seen_at) VALUES (?1, ?2, ?3, ?3) ON CONFLICT (holder, type) DO UPDATE SET since = ?3, seen_at = ?3";
const WAITER_DELETE = "DELETE FROM waiter WHERE holder = ? AND type = ?";
/** A grant uses up every slot kept for the holder, whichever of its types the slot was kept for. */
const WAITER_UNRESERVE = "UPDATE waiter SET reserved_until = NULL, reserved_units = 0 WHERE holder = ? AND reserved_until IS NOT NULL RETURNING reserved_units";
/** waiterOldestUnreserved: waiter_since_idx — the next in line for a freed slot. */
const WAITER_OLDEST_UNRESERVED = "SELECT holder, type FROM waiter WHERE reserved_until IS NULL ORDER BY since, holder, type LIMIT 1";
const WAITER_RESERVE = "UPDATE waiter SET reserved_until = ?, reserved_units = ? WHERE holder = ? AND type = ?";
const RESERVED_FOR_OTHERS = "SELECT coalesce(sum(reserved_units), 0) AS units FROM waiter WHERE reserved_until IS NOT NULL AND holder != ?";
/** A kept slot not taken in time goes back, and its waiter to the back of the line (so the slot goes to someone else). */
const RESERVATIONS_LAPSED =
  "UPDATE waiter SET reserved_until = NULL, reserved_units = 0, since = ?1 WHERE reserved_until IS NOT NULL AND reserved_until <= ?1 RETURNING reserved_units";
const WAITERS_GONE = "DELETE FROM waiter WHERE seen_at < ? AND reserved_until IS NULL";
const RESERVATION_NEXT = "SELECT min(reserved_until) AS t FROM waiter WHERE reserved_until IS NOT NULL";
const WAITERS = "SELECT holder, type, since, reserved_until FROM waiter ORDER BY since, holder, type";
const ANY_WAITER = "SELECT 1 FROM waiter LIMIT 1";
const STATE_GET = "SELECT value FROM pool_state WHERE key = ?";
const STATE_SET = "INSERT INTO pool_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value";

function stateGet(sql: SqlStorage, key: string): string | null {
  return sql.exec<{ value: string }>(STATE_GET, key).toArray()[0]?.value ?? null;
}

/** effectiveLimits: the configured limits, or those set at runtime — only for a dimension the config still has. */
export function effectiveLimits(sql: SqlStorage, configured: PoolLimits): PoolLimits {
  const set = stateGet(sql, "limits");
  if (!set) return configured;
  const o = JSON.parse(set) as Partial<PoolLimits>;
  return {
    concurrency: configured.concurrency === null ? null : (o.concurrency ?? configured.concurrency),
    ratePerMinute: configured.ratePerMinute === null ? null : (o.ratePerMinute ?? configured.ratePerMinute),
    rate: configured.rate ?? null,
  };
}

/** setLimits persists limits set at runtime; a null field returns it to the configured value. */
export function setLimits(sql: SqlStorage, limits: Partial<Pick<PoolLimits, "concurrency" | "ratePerMinute">>): void {
  const current = JSON.parse(stateGet(sql, "limits") ?? "{}") as Record<string, number | null>;
  for (const [k, v] of Object.entries(limits)) {
    if (v === null) delete current[k];
    else if (v !== undefined) current[k] = v;
  }
  sql.exec(STATE_SET, "limits", JSON.stringify(current));
}

function rateState(sql: SqlStorage): RateState | null {
  const v = stateGet(sql, "gcra");
  return v === null ? null : (JSON.parse(v) as RateState);
}

/** window: the current fixed rate window, opened at the first start after the last one closed. */
function window(sql: SqlStorage, now: number): { start: number | null; spent: number } {
  const start = Number(stateGet(sql, "window_start") ?? "NaN");
  if (!Number.isFinite(start) || now - start >= WINDOW_MS) return { start: null, spent: 0 };
  return { start, spent: Number(stateGet(sql, "window_spent") ?? "0") };
}

export function acquire(sql: SqlStorage, req: AcquireRequest, now: number): Grant {
  // Remember whether slots are scarce here: without a concurrency limit, a freed permit wakes every waiter at once.
  const slots = req.limits.concurrency !== null;
  if (slots !== (stateGet(sql, "slots") !== null)) {
    if (slots) sql.exec(STATE_SET, "slots", "1");
    else sql.exec("DELETE FROM pool_state WHERE key = 'slots'");
  }
  const wake = [...(req.epoch ? dropStale(sql, req.holder, req.epoch, now) : []), ...tidy(sql, now)];
  const limits = effectiveLimits(sql, req.limits);
  let grant = req.want;
  let blockedBy: BlockedBy | null = null;
  let retryAfterMs = 0;

  const excluded = req.excludeTypes.length ? sql.exec<{ type: string }>(PERMIT_OF_TYPES, JSON.stringify(req.excludeTypes)).toArray()[0] : undefined;
  if (excluded) {
    grant = 0;
    blockedBy = { type: excluded.type };
    retryAfterMs = untilNextExpiry(sql, now);
  }
  if (grant > 0 && limits.concurrency !== null) {
    const { units } = sql.exec<{ units: number }>(LIVE_COST).one();
    const reserved = sql.exec<{ units: number }>(RESERVED_FOR_OTHERS, req.holder).one().units;
    const fits = Math.max(0, Math.floor((limits.concurrency - units - reserved) / Math.max(req.cost, 1)));
    if (fits < grant) {
      grant = fits;
      if (fits === 0) {
        blockedBy = "concurrency";
        retryAfterMs = untilNextExpiry(sql, now);
      }
    }
  }
  const w = window(sql, now);
  if (grant > 0 && limits.ratePerMinute !== null && req.rateCost > 0) {
    const fits = Math.max(0, Math.floor((limits.ratePerMinute - w.spent) / req.rateCost));
    if (fits < grant) {
      grant = fits;
      if (fits === 0) {
        blockedBy = "rate";
        retryAfterMs = Math.max(RETRY_MIN_MS, (w.start ?? now) + WINDOW_MS - now);
      }
    }
  }

  const gcra = grant > 0 && limits.rate && req.rateCost > 0 ? gcraSpend(rateState(sql), limits.rate, req.rateCost, grant, now) : null;
  if (gcra && gcra.n < grant) {
    grant = gcra.n;
    if (grant === 0) {
      blockedBy = "rate";
      retryAfterMs = Math.max(RETRY_MIN_MS, gcra.retryAfterMs);
    }
  }
  if (gcra && grant > 0) sql.exec(STATE_SET, "gcra", JSON.stringify(gcra.state));

  const permits: string[] = [];
  // A permit's rate spend is given back if its attempt never starts: window_start says which budget it came from (null: GCRA's).
  const spend = req.rateCost > 0 && (limits.ratePerMinute !== null || !!limits.rate) ? req.rateCost : 0;
  const windowStart = spend > 0 && limits.ratePerMinute !== null ? (w.start ?? now) : null;
  for (let i = 0; i < grant; i++) {
    const id = crypto.randomUUID();
    sql.exec(PERMIT_INSERT, id, req.holder, now + req.ttlMs, req.type, req.cost, spend, windowStart, req.epoch ?? null);
    permits.push(id);
  }
  if (windowStart !== null && grant > 0) {
    sql.exec(STATE_SET, "window_start", String(windowStart));
    sql.exec(STATE_SET, "window_spent", String(w.spent + grant * spend));
  }
  // Served in full: out of the line (a kept slot is used up). Short: in line, keeping its place.
  if (grant > 0) {
    // The slots kept for this holder are spent; what the grant did not use goes to the next in line.
    const kept = sql.exec<{ reserved_units: number }>(WAITER_UNRESERVE, req.holder).toArray().reduce((n, r) => n + r.reserved_units, 0);
    const left = kept - grant * req.cost;
    if (left > 0) wake.push(...offerSlots(sql, [left], now));
  }
  if (grant === req.want) sql.exec(WAITER_DELETE, req.holder, req.type);
  else sql.exec(grant > 0 ? WAITER_REQUEUE : WAITER_UPSERT, req.holder, req.type, now);
  // The holder itself is poked too when a slot was kept for another of its types: its fill simply runs again.
  return { permits, retryAfterMs, blockedBy, wake };
}

/** renew extends the permits still held; returns the ids that were not (they expired and were taken back). */
export function renew(sql: SqlStorage, ids: readonly string[], ttlMs: number, now: number): string[] {
  const kept = new Set(sql.exec<{ id: string }>(PERMIT_RENEW, now + ttlMs, JSON.stringify(ids)).toArray().map((r) => r.id));
  return ids.filter((id) => !kept.has(id));
}

/**
 * release frees permits. With `refund`, the rate they spent in the current
 * window is given back (the attempts never started). Returns the holders whose
 * turn it now is.
 */
export function release(sql: SqlStorage, ids: readonly string[], refund: boolean, now: number): string[] {
  const taken = sql.exec<{ cost: number; rate_cost: number; window_start: number | null }>(PERMIT_TAKE, JSON.stringify(ids)).toArray();
  if (refund) {
    const w = window(sql, now);
    const back = taken.filter((p) => p.window_start !== null && p.window_start === w.start).reduce((n, p) => n + p.rate_cost, 0);
    if (back > 0) sql.exec(STATE_SET, "window_spent", String(Math.max(0, w.spent - back)));
    const gcra = rateState(sql);
    const units = taken.filter((p) => p.window_start === null).reduce((n, p) => n + p.rate_cost, 0);
    if (gcra && units > 0) sql.exec(STATE_SET, "gcra", JSON.stringify(gcraRefund(gcra, units, now)));
  }
  return [...offerSlots(sql, taken.map((p) => p.cost), now), ...tidy(sql, now)];
}

/** dropStale: take back the pushed permits of `holder` that an instance other than `epoch` took; returns who to poke. */
export function dropStale(sql: SqlStorage, holder: string, epoch: string, now: number): string[] {
  return offerSlots(sql, sql.exec<{ cost: number }>(PERMIT_TAKE_STALE, holder, epoch).toArray().map((p) => p.cost), now);
}

/** tidy: take back lapsed permits and lapsed reservations, offering their slots to the next in line. */
export function tidy(sql: SqlStorage, now: number): string[] {
  const expired = sql.exec<{ cost: number }>(PERMIT_TAKE_EXPIRED, now).toArray().map((p) => p.cost);
  const lapsed = sql.exec<{ reserved_units: number }>(RESERVATIONS_LAPSED, now).toArray().map((r) => r.reserved_units);
  // After the lapses, so a holder whose kept slot lapsed and who stopped asking leaves too; before the offers.
  sql.exec(WAITERS_GONE, now - WAITER_TTL_MS);
  return offerSlots(sql, [...expired, ...lapsed], now);
}

/**
 * offerSlots keeps each freed slot for the longest unreserved waiter and
 * returns who to poke. A pool without slots (a rate pool, a notWhileRunning
 * guard) has nothing to keep: every waiter is told to try again.
 */
function offerSlots(sql: SqlStorage, units: number[], now: number): string[] {
  if (units.length === 0) return [];
  if (stateGet(sql, "slots") === null) {
    return waitingHolders(sql);
  }
  const woken: string[] = [];
  for (const u of units) {
    const next = sql.exec<{ holder: string; type: string }>(WAITER_OLDEST_UNRESERVED).toArray()[0];
    if (!next) break;
    sql.exec(WAITER_RESERVE, now + RESERVE_MS, u, next.holder, next.type);
    woken.push(next.holder);
  }
  return woken;
}

function untilNextExpiry(sql: SqlStorage, now: number): number {
  const next = sql.exec<{ t: number | null }>(PERMIT_NEXT_EXPIRY).one().t;
  return Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, next === null ? RETRY_MIN_MS : next - now));
}

/** waitingHolders: everyone in the waiting line, longest first. */
export function waitingHolders(sql: SqlStorage): string[] {
  return sql.exec<{ holder: string }>(WAITERS).toArray().map((w) => w.holder);
}

/** nextWake: the pool's alarm — the next permit expiry, reservation lapse, or (with waiters) rate window end. */
export function nextWake(sql: SqlStorage, now: number): number | null {
  const times = [sql.exec<{ t: number | null }>(PERMIT_NEXT_EXPIRY).one().t, sql.exec<{ t: number | null }>(RESERVATION_NEXT).one().t];
  const w = window(sql, now);
  const waiting = sql.exec(ANY_WAITER).toArray().length > 0;
  if (w.start !== null && waiting) times.push(w.start + WINDOW_MS);
  const ready = readyAt(rateState(sql), now);
  if (ready !== null && waiting) times.push(ready);
  const present = times.filter((t): t is number => t !== null);
  return present.length ? Math.min(...present) : null;
}

/** pokeAfterWindow: the waiters to poke because a rate window closed, or the next GCRA start fits. */
export function pokeAfterWindow(sql: SqlStorage, now: number): string[] {
  const w = window(sql, now);
  if (w.start !== null || readyAt(rateState(sql), now) !== null) return [];
  return sql.exec<{ holder: string; reserved_until: number | null }>(WAITERS).toArray().filter((r) => r.reserved_until === null).map((r) => r.holder);
}

export interface PoolStatus {
  limits: PoolLimits;
  /** Summed cost of live permits. */
  active: number;
  permits: number;
  window: { start: number | null; spent: number };
  waiting: { holder: string; type: string; since: number; reservedUntil: number | null }[];
}

export function status(sql: SqlStorage, configured: PoolLimits, now: number): PoolStatus {
  const live = sql.exec<{ units: number; n: number }>(LIVE_COST).one();
  return {
    limits: effectiveLimits(sql, configured),
    active: live.units,
    permits: live.n,
    window: window(sql, now),
    waiting: sql
      .exec<{ holder: string; type: string; since: number; reserved_until: number | null }>(WAITERS)
      .toArray()
      .map((w) => ({ holder: w.holder, type: w.type, since: w.since, reservedUntil: w.reserved_until })),
  };
}

const WAITER_COUNT = "SELECT count(*) AS n FROM waiter";

/** figures: what the pool holds — its live permits' summed cost and its waiters (a keyed value's report: key-registry.ts). */
export function figures(sql: SqlStorage): { active: number; waiting: number } {
  return { active: sql.exec<{ units: number }>(LIVE_COST).one().units, waiting: sql.exec<{ n: number }>(WAITER_COUNT).one().n };
}

/**
 * idle: nothing here says anything any more — no permit, no waiter, no limit set at runtime, no rate spend
 * that still counts. A keyed pool object in this state deletes its storage (pool-do.ts).
 */
export function idle(sql: SqlStorage, now: number): boolean {
  if (sql.exec<{ n: number }>(LIVE_COST).one().n > 0 || sql.exec(ANY_WAITER).toArray().length > 0) return false;
  if (stateGet(sql, "limits") !== null && stateGet(sql, "limits") !== "{}") return false;
  return window(sql, now).start === null && drained(rateState(sql), now);
}

/** drainsAt: when a spent GCRA budget stops counting (the idle object's last wake), or null. */
export function drainsAt(sql: SqlStorage, now: number): number | null {
  const s = rateState(sql);
  return s && s.tat > now ? Math.ceil(s.tat) : null;
}
