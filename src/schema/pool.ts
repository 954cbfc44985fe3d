/**
 * The tables of one PoolDO: permits (leases on a slot of the pool) and the
 * holders waiting for one. Occupancy is never stored: it is the count of
 * unexpired permits, so a holder that dies frees its slots when they lapse.
 *
 * @module
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const permit = sqliteTable(
  "permit",
  {
    id: text("id").primaryKey(),
    /** The scope object holding it. */
    holder: text("holder").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("permit_expires_idx").on(t.expiresAt)],
);

export const waiter = sqliteTable(
  "waiter",
  {
    holder: text("holder").primaryKey(),
    /** Waiting since: the longest waiter is told first when a slot frees. */
    since: integer("since").notNull(),
  },
  (t) => [index("waiter_since_idx").on(t.since)],
);
