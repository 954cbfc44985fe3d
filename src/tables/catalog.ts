/**
 * The tables of the CatalogDO: which homes exist and what each holds, per job
 * type, as of its last summary. Eventually consistent by design.
 *
 * @module
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const home = sqliteTable("home", {
  name: text("name").primaryKey(),
  /** When the summary was built, by the home's clock; older summaries are ignored. */
  reportedAt: integer("reported_at").notNull(),
  /**
   * No longer written (always 0): who a claim was last pointed at is kept in the catalog's memory, so a
   * claim costs the catalog no write (catalog-store.ts, ServedHomes). Kept to spare a table rebuild.
   */
  lastServedAt: integer("last_served_at").notNull(),
});

export const homeType = sqliteTable(
  "home_type",
  {
    home: text("home").notNull(),
    type: text("type").notNull(),
    pending: integer("pending").notNull(),
    scheduled: integer("scheduled").notNull(),
    running: integer("running").notNull(),
    completed: integer("completed").notNull(),
    failedRetriesExhausted: integer("failed_retries_exhausted").notNull(),
    failedFatal: integer("failed_fatal").notNull(),
    failedStalled: integer("failed_stalled").notNull(),
    failedTimeout: integer("failed_timeout").notNull(),
    /** A replay that no longer matched its journal (src/job/states.ts). */
    failedNondeterminism: integer("failed_nondeterminism").notNull().default(0),
    cancelled: integer("cancelled").notNull(),
    superseded: integer("superseded").notNull().default(0),
    /** Jobs waiting for a signal or a wait token (src/job/states.ts). */
    waiting: integer("waiting").notNull().default(0),
    /** Jobs that expired before they started (src/job/states.ts). */
    expired: integer("expired").notNull().default(0),
    /** Earliest runAt of a pending job of this type, null when none. */
    nextRunAt: integer("next_run_at"),
  },
  (t) => [
    primaryKey({ columns: [t.home, t.type] }),
    index("home_type_type_idx").on(t.type, t.nextRunAt),
    // Only rows with a pending job have an entry: a summary that clears next_run_at (its jobs ran) writes none.
    index("home_type_next_idx").on(t.nextRunAt).where(sql`next_run_at IS NOT NULL`),
  ],
);

const counters = () => ({
  enqueued: integer("enqueued").notNull(),
  started: integer("started").notNull(),
  completed: integer("completed").notNull(),
  failed: integer("failed").notNull(),
  retried: integer("retried").notNull(),
  cancelled: integer("cancelled").notNull(),
});

/**
 * Each home's per-minute counters as it last reported them (absolute values,
 * so a summary sent twice changes nothing). Kept METRIC_RETENTION_MS, longer
 * than any home re-reports a minute; only ever read by primary key.
 */
export const metric = sqliteTable(
  "metric",
  { home: text("home").notNull(), type: text("type").notNull(), minute: integer("minute").notNull(), ...counters() },
  // WITHOUT ROWID, keyed minute first (migration `metric_without_rowid`): a new row writes itself alone, where the
  // rowid table wrote its primary key's and its minute index's entries too; old minutes are dropped by key range.
  (t) => [primaryKey({ columns: [t.minute, t.home, t.type] })],
);

/**
 * Counters since the catalog began, per type, less the minutes `metric_series` still holds: a series minute is
 * added here when it is dropped (catalog/metrics-store.ts, migration `metric_total_base`), so the totals — this
 * plus the series — only grow and outlive the per-minute rows: Prometheus counters.
 */
export const metricTotal = sqliteTable("metric_total", { type: text("type").primaryKey(), ...counters() });

/**
 * The queue-wide per-minute series, per type: each change to `metric` adds its
 * growth here too (migration `metric_growth_triggers`), so a dashboard refresh
 * reads types × minutes rows, not homes × types × minutes.
 */
export const metricSeries = sqliteTable(
  "metric_series",
  { minute: integer("minute").notNull(), type: text("type").notNull(), ...counters() },
  (t) => [primaryKey({ columns: [t.minute, t.type] })],
);

/**
 * When a pull claim last asked for each type (`*`: a claim without types, which
 * takes any pulled type). With the declarations in the config, it tells a type
 * that nothing will run apart from one a worker is draining (catalog/claimed-types.ts).
 */
export const claimedType = sqliteTable("claimed_type", { type: text("type").primaryKey(), askedAt: integer("asked_at").notNull() });

/**
 * Paused job types (catalog/pause-store.ts; docs/http-api.md "Pausing a type"): every
 * shard holds the same rows, written by the same operator call. A resume
 * keeps the row with `paused` 0, so `version` — the number of changes so
 * far, the highest wins — never goes back and a home can tell an old answer
 * from a new one.
 */
export const typePause = sqliteTable("type_pause", {
  type: text("type").primaryKey(),
  paused: integer("paused").notNull(),
  changedAt: integer("changed_at").notNull(),
  version: integer("version").notNull(),
});

/**
 * The homes this shard has promised to tell of a pause change until `until`
 * (each report or sync renews the promise): a home whose promise has lapsed
 * asks before it dispatches or hands out a job (scope/jobs/pause-gate.ts).
 * WITHOUT ROWID and no index on `until` (migration 0013): a renewal writes its
 * row alone; a pause reads the table whole (catalog/pause-store.ts).
 */
export const pauseWatch = sqliteTable("pause_watch", { home: text("home").primaryKey(), until: integer("until").notNull() });

/** What each object kind used (metering/usage.ts), as its meters reported it: the columns of both usage tables. */
const usage = () => ({
  rowsWritten: integer("rows_written").notNull(),
  rowsRead: integer("rows_read").notNull(),
  requests: integer("requests").notNull(),
  activeMs: integer("active_ms").notNull(),
  /** Of the rows, those of schema migrations: new objects' setup. */
  setupRowsWritten: integer("setup_rows_written").notNull().default(0),
  setupRowsRead: integer("setup_rows_read").notNull().default(0),
});

/**
 * Usage per object kind since the catalog began, less what `usage_minute` still holds (catalog/usage-store.ts): a
 * minute's usage is added here when the minute is dropped, so a report writes its minute's row alone. `/v1/metrics`'
 * storage and request counters are this plus the minutes kept.
 */
export const objectUsage = sqliteTable("object_usage", { object: text("object").primaryKey(), ...usage() });

/**
 * What each object's current instance reported last (catalog/usage-store.ts): its whole total since it began, so a
 * report counts only what grew since the one before — a report sent twice or after a lost one counts once. A row
 * no report renewed in a day is dropped (an instance idle that long has been evicted long since).
 */
export const usageSender = sqliteTable(
  "usage_sender",
  // No index on `at`: every report moves it, and an index entry would be a row written per report; the daily drop
  // reads the table instead (rows read cost a thousandth of rows written).
  { name: text("name").primaryKey(), object: text("object").notNull(), instance: text("instance").notNull(), at: integer("at").notNull(), ...usage() },
);

/** Usage per object kind per minute, kept as long as the metric series: the dashboard's rows written per job. */
export const usageMinute = sqliteTable(
  "usage_minute",
  { minute: integer("minute").notNull(), object: text("object").notNull(), ...usage() },
  (t) => [primaryKey({ columns: [t.minute, t.object] })],
);

/**
 * The audit list (catalog/audit-store.ts; docs/operating.md "Tokens and roles"): every operator action — a pause,
 * cancel, retry, rerun, pool or schedule change, bulk action — with the name and role of the token that made it,
 * in the main catalog object. Kept `retention.auditMs` (default 90 days); `at` indexed for that drop.
 */
export const auditEntry = sqliteTable(
  "audit_entry",
  {
    id: integer("id").primaryKey(),
    at: integer("at").notNull(),
    token: text("token").notNull(),
    role: text("role").notNull(),
    /** The operationId, or `dashboard <path>` for a dashboard action. */
    action: text("action").notNull(),
    /** JSON: what it acted on (its path's parameters, its body without payloads), and what it answered in counts. */
    detail: text("detail").notNull(),
  },
  (t) => [index("audit_entry_at_idx").on(t.at)],
);

/**
 * Each budget's state in its current window (catalog/budgets.ts; docs/operating.md "Spend caps"), in the main catalog
 * object: when it crossed its soft and hard limits, the types its hard limit paused (JSON array; resumed when the
 * window turns or an operator lifts it), and when it was lifted. A row per budget, rewritten when its window turns.
 */
export const budgetState = sqliteTable("budget_state", {
  name: text("name").primaryKey(),
  windowStart: integer("window_start").notNull(),
  softAt: integer("soft_at"),
  hardAt: integer("hard_at"),
  paused: text("paused"),
  liftedAt: integer("lifted_at"),
});
