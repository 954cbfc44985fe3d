/**
 * What a ScopeDO counts and keeps of its jobs' lives beside their rows: the counts per type, the timeline, the
 * per-minute counters, the error groups, and `meta` (src/tables/scope.ts gathers the object's tables).
 *
 * @module
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per type (a table WITHOUT ROWID, so a change writes one row and no index entry): its live counts per
 * state (failed per kind), so stats and summaries cost O(types), not O(jobs); and the counters of its latest
 * minute (`minute`, `m_*`), moved to metric_minute when a later minute begins. A job's transition writes this
 * one row — counts and counter together — by trigger or, for the statements that move many jobs, once per type
 * (scope/jobs/tallies.ts; migration `type_count`). It replaced `job_count` (a row per state: two rows per move) and
 * a metric_minute upsert per move (docs/design.md "What a job costs").
 */
export const typeCount = sqliteTable("type_count", {
  type: text("type").primaryKey(),
  pending: integer("pending").notNull().default(0),
  running: integer("running").notNull().default(0),
  waiting: integer("waiting").notNull().default(0),
  completed: integer("completed").notNull().default(0),
  cancelled: integer("cancelled").notNull().default(0),
  superseded: integer("superseded").notNull().default(0),
  expired: integer("expired").notNull().default(0),
  failedRetriesExhausted: integer("failed_retries_exhausted").notNull().default(0),
  failedFatal: integer("failed_fatal").notNull().default(0),
  failedStalled: integer("failed_stalled").notNull().default(0),
  failedTimeout: integer("failed_timeout").notNull().default(0),
  failedNondeterminism: integer("failed_nondeterminism").notNull().default(0),
  /** Epoch ms of the minute the m_* counters count. */
  minute: integer("minute").notNull().default(0),
  mEnqueued: integer("m_enqueued").notNull().default(0),
  mStarted: integer("m_started").notNull().default(0),
  mCompleted: integer("m_completed").notNull().default(0),
  mFailed: integer("m_failed").notNull().default(0),
  mRetried: integer("m_retried").notNull().default(0),
  mCancelled: integer("m_cancelled").notNull().default(0),
});

/**
 * The steps of a job's history its row can no longer tell, written by
 * triggers on `job` (migration `job_history_triggers`) in the statement that
 * changes the job: an attempt that ended back in pending, and, when a finished
 * job is retried by hand, the end it undoes. Creation, the current attempt's
 * start and the final state are read from the job row itself (scope/jobs/timeline.ts), so
 * a job that succeeds first time writes none. Deleted with the job.
 */
export const jobTransition = sqliteTable(
  "job_transition",
  {
    /** The step's place in its job's timeline, from 1 (migration `transition_without_rowid`: per job, not per table). */
    id: integer("id").notNull(),
    jobSeq: integer("job_seq").notNull(),
    at: integer("at").notNull(),
    state: text("state").notNull(),
    /** The job's attempt count after the step. */
    attempt: integer("attempt").notNull(),
    /** failed: kind and error; cancelled: the reason; pending after an attempt: its error; "manual retry". */
    note: text("note"),
    /** When the attempt that this step ended had started (null when it ended no attempt). */
    startedAt: integer("started_at"),
    /** The version of the code that ran the attempt this step ended (job.code_version when it ended), or null. */
    version: text("version"),
  },
  // WITHOUT ROWID, keyed by (job, place) alone: a timeline step writes one row, where it wrote its row and its
  // job_transition_job_idx entry (migration `transition_without_rowid`).
  (t) => [primaryKey({ columns: [t.jobSeq, t.id] })],
);

/**
 * Per-minute counters per job type, kept by the same triggers (and, for
 * `enqueued`, by enqueue once per type per batch). Sent to the
 * catalog with each summary (the minutes since the last one) and kept here two
 * hours (METRIC_KEEP_MS); the catalog holds the queue-wide series.
 */
export const metricMinute = sqliteTable(
  "metric_minute",
  {
    /** Epoch ms of the minute's start. */
    minute: integer("minute").notNull(),
    type: text("type").notNull(),
    enqueued: integer("enqueued").notNull().default(0),
    started: integer("started").notNull().default(0),
    completed: integer("completed").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    /** Back to pending after an attempt or a manual retry. */
    retried: integer("retried").notNull().default(0),
    cancelled: integer("cancelled").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.minute, t.type] })],
);

/**
 * Error groups (scope/errors/error-groups.ts; docs/operating.md "Error groups"): the attempts that ended in an error
 * here, by type and fingerprint (job/error-group.ts) — one row per group, written once per failed attempt (WITHOUT
 * ROWID, so no key index entry beside it). `buckets` counts them per five minutes over the last day (JSON
 * `{"<bucket start>": n}`), `recent` the newest jobs' ids (a group's retry or rerun acts on them).
 */
export const errorGroup = sqliteTable(
  "error_group",
  {
    type: text("type").notNull(),
    fingerprint: text("fingerprint").notNull(),
    kind: text("kind", { enum: ["error", "fatal", "timeout", "stalled", "nondeterminism"] }).notNull(),
    /** The message's first line, masked (what the group's jobs share). */
    message: text("message").notNull(),
    /** The first frame of the stack, when the handler's runtime sent one. */
    frame: text("frame"),
    /** The first error as it was, cut to 500 characters. */
    sample: text("sample").notNull(),
    firstAt: integer("first_at").notNull(),
    firstJob: text("first_job").notNull(),
    lastAt: integer("last_at").notNull(),
    lastJob: text("last_job").notNull(),
    total: integer("total").notNull(),
    buckets: text("buckets").notNull(),
    recent: text("recent").notNull(),
  },
  (t) => [primaryKey({ columns: [t.type, t.fingerprint] })],
);

/** Small facts about this object: its home name, whether the catalog is behind, the last alarm error. */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
