/**
 * The tables of one ScopeDO. drizzle-kit generates `migrations/scope/` from
 * this file and the ones it re-exports (the job table, the counts, the
 * workflow tables); the hot-path statements in `src/scope/` are written
 * against these names and say which index they use. Here: permits, tombstones,
 * paused types, owed callbacks, kept log lines and staged batches.
 *
 * @module
 */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export * from "./scope-job";
export * from "./scope-counts";
export * from "./scope-workflow";

/**
 * The pool permits a pulled attempt holds (scope/pull/pull-permits.ts; README
 * "Pull workers"): taken when the claim leased it, renewed by its heartbeats,
 * returned once no running attempt of that lease holds them — complete, fail,
 * release, sleep, cancel or the reap pass. One row per (pool, permit).
 */
export const jobPermit = sqliteTable(
  "job_permit",
  {
    pool: text("pool").notNull(),
    permitId: text("permit_id").notNull(),
    jobSeq: integer("job_seq").notNull(),
    /** The lease the permit went with: a later attempt of the same job holds its own. */
    leaseToken: text("lease_token").notNull(),
    /**
     * Cancelled while running: the worker learns it at its next heartbeat, so the permit is kept
     * until the lease it had would have ended (then returned by the alarm). Null otherwise.
     */
    holdUntil: integer("hold_until"),
  },
  (t) => [primaryKey({ columns: [t.pool, t.permitId] }), index("job_permit_job_idx").on(t.jobSeq)],
);

/**
 * What retention leaves of a deleted job: its id, until `expires_at`
 * (`retention.idempotencyMs` after the delete), so an enqueue with the same
 * id still answers "already done" (`{created: false, job: null}`) and creates
 * nothing (scope/jobs/tombstones.ts; docs/guarantees.md "Guarantees and limits").
 */
export const jobTombstone = sqliteTable(
  "job_tombstone",
  {
    id: text("id").primaryKey(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("job_tombstone_expires_idx").on(t.expiresAt)],
);

/**
 * The job types paused queue-wide, as this object last heard from its catalog
 * shard (scope/jobs/pause-gate.ts): none of their jobs is dispatched or claimed
 * here. The version and the promise's end are kept in `meta`.
 */
export const typePause = sqliteTable("type_pause", { type: text("type").primaryKey() });

/**
 * Completion callbacks owed (scope/watching/callbacks.ts; docs/http-api.md "Completion callbacks"): written by the
 * job_callback trigger in the transaction that ended the job, deleted once the URL answered 2xx, kept with
 * `dead_at` after the last try (listed by GET /v1/callbacks/dead) until the job is deleted. No index: the table
 * holds only what is owed and what died, and rows read cost a thousandth of rows written.
 */
export const callbackOut = sqliteTable("callback_out", {
  seq: integer("seq").primaryKey(),
  jobSeq: integer("job_seq").notNull(),
  /** The state the job ended in (the trigger's). */
  state: text("state").notNull(),
  /** When the job ended so (its finished_at then): with the job's id, the delivery's id, the same on every try. */
  endedAt: integer("ended_at").notNull(),
  /** When it is sent (again). */
  nextAt: integer("next_at").notNull(),
  tries: integer("tries").notNull().default(0),
  lastError: text("last_error"),
  /** When it was given up on; null while it is still owed. */
  deadAt: integer("dead_at"),
  /**
   * The ending's own fields (state, error, result, times…) as JSON, kept by the job_callback_undone trigger when a
   * manual retry undoes the ending before its callback was sent: the callback tells the ending it was owed for, not
   * the job's state since. Null while the job still ends as it did.
   */
  ending: text("ending"),
});

/**
 * `ctx.log` lines kept with the job (scope/jobs/job-logs.ts; README "Logs kept with
 * the job"): the newest 100 per job, each at most 2 KiB. Deleted with the job
 * (trigger, migration `job_log_triggers`).
 */
export const jobLog = sqliteTable(
  "job_log",
  {
    /** Write order within the job, from 1; the newest are the highest. */
    id: integer("id").notNull(),
    jobSeq: integer("job_seq").notNull(),
    at: integer("at").notNull(),
    attempt: integer("attempt").notNull(),
    message: text("message").notNull(),
    /** JSON object, or null. */
    fields: text("fields"),
  },
  // Keyed by (job, place) alone, WITHOUT ROWID (migration 0040): a line is one row written, where a rowid table
  // wrote its row and its job_log_job_idx entry.
  (t) => [primaryKey({ columns: [t.jobSeq, t.id] })],
);

/**
 * A batch enqueue spread over several objects, staged here until its decision
 * (scope/batches/batch-stage.ts; docs/http-api.md "The HTTP API"): the jobs are kept as they
 * would be enqueued, invisible to claims, dispatch, listings and stats, and
 * become jobs only when the batch commits.
 */
export const jobStage = sqliteTable(
  "job_stage",
  {
    batch: text("batch").notNull(),
    /** The job's place among this object's part of the batch. */
    idx: integer("idx").notNull(),
    /** The job as the enqueue would take it (scope/jobs/enqueue.ts NewJob), JSON. */
    job: text("job").notNull(),
    stagedAt: integer("staged_at").notNull(),
    /** The object that holds the batch's decision. */
    decider: text("decider").notNull(),
  },
  // WITHOUT ROWID, keyed by its primary key alone (migration `stage_without_rowid`): a staged part writes one row, where
  // it wrote its primary key's entry and a staged_at index entry (read by no query) too.
  (t) => [primaryKey({ columns: [t.batch, t.idx] })],
);

/** The decisions of the batches this object decides: commit or abort, whichever came first. */
export const batchDecision = sqliteTable(
  "batch_decision",
  {
    batch: text("batch").primaryKey(),
    decision: text("decision", { enum: ["commit", "abort"] }).notNull(),
    decidedAt: integer("decided_at").notNull(),
  },
  // WITHOUT ROWID (migration `stage_without_rowid`): a decision writes its row and its decided_at entry, not its key's too.
  (t) => [index("batch_decision_at_idx").on(t.decidedAt)],
);
