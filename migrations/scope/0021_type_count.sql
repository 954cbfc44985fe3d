-- Custom SQL (hand-written; drizzle made only the CREATE TABLE): type_count replaces job_count and the
-- per-move metric_minute upsert (src/tables/scope.ts typeCount). A transition writes one row — the type's
-- counts and its latest minute's counter together — where it wrote three (two job_count rows and a
-- metric_minute upsert). WITHOUT ROWID: the row is keyed by type, so a write touches no index.
-- The statements that move many jobs at once bump `tally` and count per type themselves (src/scope/tallies.ts).
DROP TRIGGER job_count_insert;
--> statement-breakpoint
DROP TRIGGER job_count_update;
--> statement-breakpoint
DROP TRIGGER job_metric_update;
--> statement-breakpoint
CREATE TABLE `type_count` (
	`type` text PRIMARY KEY NOT NULL,
	`pending` integer DEFAULT 0 NOT NULL,
	`running` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	`superseded` integer DEFAULT 0 NOT NULL,
	`failed_retries_exhausted` integer DEFAULT 0 NOT NULL,
	`failed_fatal` integer DEFAULT 0 NOT NULL,
	`failed_stalled` integer DEFAULT 0 NOT NULL,
	`failed_timeout` integer DEFAULT 0 NOT NULL,
	`minute` integer DEFAULT 0 NOT NULL,
	`m_enqueued` integer DEFAULT 0 NOT NULL,
	`m_started` integer DEFAULT 0 NOT NULL,
	`m_completed` integer DEFAULT 0 NOT NULL,
	`m_failed` integer DEFAULT 0 NOT NULL,
	`m_retried` integer DEFAULT 0 NOT NULL,
	`m_cancelled` integer DEFAULT 0 NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
-- Tables keyed by their primary key alone, rebuilt WITHOUT ROWID: a row written is then one row, where a
-- rowid table also wrote its primary key's index entry — a journal step, a tombstone, a new minute, a meta
-- value each cost two rows written (docs/design.md "What a job costs").
DROP TRIGGER job_step_delete;
--> statement-breakpoint
CREATE TABLE `job_step_new` (
	`job_seq` integer NOT NULL,
	`seq` integer NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`result` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`attempt` integer NOT NULL,
	`wake_at` integer,
	`bytes` integer NOT NULL,
	PRIMARY KEY(`job_seq`, `seq`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO job_step_new (job_seq, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes)
SELECT job_seq, seq, name, kind, result, started_at, finished_at, attempt, wake_at, bytes FROM job_step;
--> statement-breakpoint
DROP TABLE job_step;
--> statement-breakpoint
ALTER TABLE job_step_new RENAME TO job_step;
--> statement-breakpoint
CREATE TRIGGER job_step_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_step WHERE job_seq = old.seq;
END;
--> statement-breakpoint
CREATE TABLE `job_tombstone_new` (
	`id` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO job_tombstone_new (id, expires_at) SELECT id, expires_at FROM job_tombstone;
--> statement-breakpoint
DROP TABLE job_tombstone;
--> statement-breakpoint
ALTER TABLE job_tombstone_new RENAME TO job_tombstone;
--> statement-breakpoint
CREATE INDEX `job_tombstone_expires_idx` ON `job_tombstone` (`expires_at`);
--> statement-breakpoint
CREATE TABLE `metric_minute_new` (
	`minute` integer NOT NULL,
	`type` text NOT NULL,
	`enqueued` integer DEFAULT 0 NOT NULL,
	`started` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`retried` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`minute`, `type`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO metric_minute_new SELECT minute, type, enqueued, started, completed, failed, retried, cancelled FROM metric_minute;
--> statement-breakpoint
DROP TABLE metric_minute;
--> statement-breakpoint
ALTER TABLE metric_minute_new RENAME TO metric_minute;
--> statement-breakpoint
CREATE TABLE `meta_new` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO meta_new (key, value) SELECT key, value FROM meta;
--> statement-breakpoint
DROP TABLE meta;
--> statement-breakpoint
ALTER TABLE meta_new RENAME TO meta;
--> statement-breakpoint
-- The counts so far, one row per type (its minute counters start empty: metric_minute holds the minutes so far).
INSERT INTO type_count (type, pending, running, completed, cancelled, superseded, failed_retries_exhausted, failed_fatal, failed_stalled, failed_timeout)
SELECT type,
       coalesce(sum(n) FILTER (WHERE state = 'pending'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'running'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'completed'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'cancelled'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'superseded'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'failed' AND failure_kind = 'retries_exhausted'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'failed' AND failure_kind = 'fatal'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'failed' AND failure_kind = 'stalled'), 0),
       coalesce(sum(n) FILTER (WHERE state = 'failed' AND failure_kind = 'timeout'), 0)
  FROM job_count GROUP BY type;
--> statement-breakpoint
-- A job inserted by any other statement than the enqueue's (which counts its own: tally = 1).
CREATE TRIGGER job_count_insert AFTER INSERT ON job WHEN new.tally = 0 BEGIN
  INSERT INTO type_count (type) VALUES (new.type) ON CONFLICT (type) DO NOTHING;
  UPDATE type_count SET
    pending = pending + (new.state = 'pending'),
    running = running + (new.state = 'running'),
    completed = completed + (new.state = 'completed'),
    cancelled = cancelled + (new.state = 'cancelled'),
    superseded = superseded + (new.state = 'superseded'),
    failed_retries_exhausted = failed_retries_exhausted + (new.state = 'failed' AND new.failure_kind IS 'retries_exhausted'),
    failed_fatal = failed_fatal + (new.state = 'failed' AND new.failure_kind IS 'fatal'),
    failed_stalled = failed_stalled + (new.state = 'failed' AND new.failure_kind IS 'stalled'),
    failed_timeout = failed_timeout + (new.state = 'failed' AND new.failure_kind IS 'timeout')
   WHERE type = new.type;
END;
--> statement-breakpoint
-- A move by any statement that does not count its own (`tally` unchanged): the row's minute rolls over into
-- metric_minute first when this move is in a later minute; a move in an earlier minute (a clock that went
-- back) is counted straight into its minute's metric_minute row.
CREATE TRIGGER job_count_update AFTER UPDATE OF state, failure_kind ON job
WHEN (old.state IS NOT new.state OR old.failure_kind IS NOT new.failure_kind) AND new.tally = old.tally BEGIN
  INSERT INTO metric_minute (minute, type, enqueued, started, completed, failed, retried, cancelled)
  SELECT minute, type, m_enqueued, m_started, m_completed, m_failed, m_retried, m_cancelled FROM type_count
   WHERE type = new.type AND minute < (new.updated_at / 60000 * 60000)
     AND m_enqueued + m_started + m_completed + m_failed + m_retried + m_cancelled > 0
  ON CONFLICT (minute, type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
  INSERT INTO metric_minute (minute, type, started, completed, failed, retried, cancelled)
  SELECT (new.updated_at / 60000 * 60000), new.type, new.state = 'running', new.state = 'completed', new.state = 'failed', new.state = 'pending', new.state IN ('cancelled', 'superseded')
    FROM type_count WHERE type = new.type AND minute > (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state
  ON CONFLICT (minute, type) DO UPDATE SET
    started = started + excluded.started, completed = completed + excluded.completed, failed = failed + excluded.failed,
    retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
  UPDATE type_count SET
    pending = pending + (new.state = 'pending') - (old.state = 'pending'),
    running = running + (new.state = 'running') - (old.state = 'running'),
    completed = completed + (new.state = 'completed') - (old.state = 'completed'),
    cancelled = cancelled + (new.state = 'cancelled') - (old.state = 'cancelled'),
    superseded = superseded + (new.state = 'superseded') - (old.state = 'superseded'),
    failed_retries_exhausted = failed_retries_exhausted + (new.state = 'failed' AND new.failure_kind IS 'retries_exhausted') - (old.state = 'failed' AND old.failure_kind IS 'retries_exhausted'),
    failed_fatal = failed_fatal + (new.state = 'failed' AND new.failure_kind IS 'fatal') - (old.state = 'failed' AND old.failure_kind IS 'fatal'),
    failed_stalled = failed_stalled + (new.state = 'failed' AND new.failure_kind IS 'stalled') - (old.state = 'failed' AND old.failure_kind IS 'stalled'),
    failed_timeout = failed_timeout + (new.state = 'failed' AND new.failure_kind IS 'timeout') - (old.state = 'failed' AND old.failure_kind IS 'timeout'),
    m_enqueued = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_enqueued END,
    m_started = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_started END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'running'),
    m_completed = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_completed END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'completed'),
    m_failed = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_failed END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'failed'),
    m_retried = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_retried END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'pending'),
    m_cancelled = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_cancelled END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state IN ('cancelled', 'superseded')),
    minute = max(minute, (new.updated_at / 60000 * 60000))
   WHERE type = new.type;
END;
