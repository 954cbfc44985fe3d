/**
 * The tables of one PoolDO: permits (leases on a share of the pool), the
 * holders waiting for one, and the pool's small state (rate window, limits
 * set at runtime). Occupancy is never stored: it is the summed cost of
 * unexpired permits, so a holder that dies frees its slots when they lapse.
 *
 * @module
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const permit = sqliteTable(
  "permit",
  {
    id: text("id").primaryKey(),
    /** The scope object holding it. */
    holder: text("holder").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** The job type whose attempt holds it (guards between types look at this). */
    type: text("type").notNull().default(""),
    /** Concurrency units it holds. */
    cost: integer("cost").notNull().default(1),
    /** Rate units it spent, and in which window — refunded if the attempt never started. */
    rateCost: integer("rate_cost").notNull().default(0),
    windowStart: integer("window_start"),
    /** The instance of the pushing scope object that took it (null: a pulled lease's, kept in its job_permit). */
    epoch: text("epoch"),
  },
  (t) => [index("permit_expires_idx").on(t.expiresAt)],
);

export const waiter = sqliteTable(
  "waiter",
  {
    holder: text("holder").notNull(),
    /** What it waits to run: one holder may wait for several types. */
    type: text("type").notNull().default(""),
    /** Waiting since: the longest waiter is told first when a slot frees. */
    since: integer("since").notNull(),
    /** Set when a freed slot was kept for this holder: others cannot take it until then. */
    reservedUntil: integer("reserved_until"),
    /** The concurrency units kept for it. */
    reservedUnits: integer("reserved_units").notNull().default(0),
    /** Last refused: a waiter that stops asking (its jobs were cancelled, its object is gone) leaves the line. */
    seenAt: integer("seen_at").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.holder, t.type] }), index("waiter_since_idx").on(t.since)],
);

/** Small named values: `window_start`, `window_spent`, `limits` (JSON, set by PUT /v1/pools/{name}). */
export const poolState = sqliteTable("pool_state", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * A keyed limit's registry (docs/guards.md "Keyed limits"): kept in the object of the limit's own name (the key
 * values' objects are `<name>#<key>`), one row per key value that holds permits or has waiters, as that value's
 * object last reported it (pool/key-registry.ts) — what `GET /v1/pools` lists, busiest first. A value's row goes
 * when its object reports nothing held.
 */
export const poolKey = sqliteTable(
  "pool_key",
  {
    key: text("key").primaryKey(),
    /** Summed cost of its live permits. */
    active: integer("active").notNull(),
    /** Holders in its waiting line. */
    waiting: integer("waiting").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("pool_key_busy_idx").on(sql`${t.active} DESC`, t.key)],
);
