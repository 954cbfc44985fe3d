/**
 * The table of the ScheduleDO: one row per schedule, its trigger, its policy
 * and where it stands (the next slot, the last one fired).
 *
 * @module
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { Misfire } from "../job/schedule-spec";

export const schedule = sqliteTable(
  "schedule",
  {
    name: text("name").primaryKey(),
    type: text("type").notNull(),
    /** JSON text. */
    payload: text("payload").notNull(),
    scopeType: text("scope_type"),
    scopeId: text("scope_id"),
    cron: text("cron"),
    /** The IANA time zone of `cron`; null: UTC. */
    tz: text("tz"),
    everyMs: integer("every_ms"),
    at: integer("at"),
    /** everyMs: the grid's first slot; slots are anchor + k·everyMs. */
    anchor: integer("anchor").notNull(),
    misfire: text("misfire").$type<Misfire>().notNull(),
    maxCatchup: integer("max_catchup"),
    paused: integer("paused", { mode: "boolean" }).notNull(),
    /** api or config. */
    source: text("source").$type<"api" | "config">().notNull(),
    /** Bumped whenever the schedule is replaced: its fires' job ids carry it, and a pass records only for its own generation. */
    generation: integer("generation").notNull(),
    /** The first slot not yet fired or skipped; null when done (a past `at`). */
    nextRunAt: integer("next_run_at"),
    lastFiredAt: integer("last_fired_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("schedule_next_idx").on(t.nextRunAt)],
);
