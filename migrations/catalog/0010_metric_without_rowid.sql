-- Custom SQL (drizzle made only the rebuild of `metric` for its new key): the catalog's per-minute tables keyed
-- by their primary key alone, rebuilt WITHOUT ROWID, so a new row writes itself alone — a rowid table wrote its
-- primary key's entry too, and `metric` its minute index's (docs/design.md "The catalog"). `metric` is keyed
-- minute first, so old minutes are dropped by key range. Dropping `metric` dropped its growth triggers
-- (migration 0002): made again, unchanged.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_metric` (
	`home` text NOT NULL,
	`type` text NOT NULL,
	`minute` integer NOT NULL,
	`enqueued` integer NOT NULL,
	`started` integer NOT NULL,
	`completed` integer NOT NULL,
	`failed` integer NOT NULL,
	`retried` integer NOT NULL,
	`cancelled` integer NOT NULL,
	PRIMARY KEY(`minute`, `home`, `type`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_metric`("home", "type", "minute", "enqueued", "started", "completed", "failed", "retried", "cancelled") SELECT "home", "type", "minute", "enqueued", "started", "completed", "failed", "retried", "cancelled" FROM `metric`;--> statement-breakpoint
DROP TABLE `metric`;--> statement-breakpoint
ALTER TABLE `__new_metric` RENAME TO `metric`;--> statement-breakpoint
CREATE TABLE `metric_series_new` (
	`minute` integer NOT NULL,
	`type` text NOT NULL,
	`enqueued` integer NOT NULL,
	`started` integer NOT NULL,
	`completed` integer NOT NULL,
	`failed` integer NOT NULL,
	`retried` integer NOT NULL,
	`cancelled` integer NOT NULL,
	PRIMARY KEY(`minute`, `type`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `metric_series_new` SELECT minute, type, enqueued, started, completed, failed, retried, cancelled FROM `metric_series`;--> statement-breakpoint
DROP TABLE `metric_series`;--> statement-breakpoint
ALTER TABLE `metric_series_new` RENAME TO `metric_series`;--> statement-breakpoint
CREATE TABLE `usage_minute_new` (
	`minute` integer NOT NULL,
	`object` text NOT NULL,
	`rows_written` integer NOT NULL,
	`rows_read` integer NOT NULL,
	`requests` integer NOT NULL,
	`active_ms` integer NOT NULL,
	`setup_rows_written` integer DEFAULT 0 NOT NULL,
	`setup_rows_read` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`minute`, `object`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `usage_minute_new` SELECT minute, object, rows_written, rows_read, requests, active_ms, setup_rows_written, setup_rows_read FROM `usage_minute`;--> statement-breakpoint
DROP TABLE `usage_minute`;--> statement-breakpoint
ALTER TABLE `usage_minute_new` RENAME TO `usage_minute`;--> statement-breakpoint
CREATE TABLE `usage_sender_new` (
	`name` text PRIMARY KEY NOT NULL,
	`object` text NOT NULL,
	`instance` text NOT NULL,
	`at` integer NOT NULL,
	`rows_written` integer NOT NULL,
	`rows_read` integer NOT NULL,
	`requests` integer NOT NULL,
	`active_ms` integer NOT NULL,
	`setup_rows_written` integer DEFAULT 0 NOT NULL,
	`setup_rows_read` integer DEFAULT 0 NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `usage_sender_new` SELECT name, object, instance, at, rows_written, rows_read, requests, active_ms, setup_rows_written, setup_rows_read FROM `usage_sender`;--> statement-breakpoint
DROP TABLE `usage_sender`;--> statement-breakpoint
ALTER TABLE `usage_sender_new` RENAME TO `usage_sender`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE TRIGGER metric_growth_insert AFTER INSERT ON metric BEGIN
  INSERT INTO metric_total (type, enqueued, started, completed, failed, retried, cancelled)
  VALUES (new.type, new.enqueued, new.started, new.completed, new.failed, new.retried, new.cancelled)
  ON CONFLICT (type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
  INSERT INTO metric_series (minute, type, enqueued, started, completed, failed, retried, cancelled)
  VALUES (new.minute, new.type, new.enqueued, new.started, new.completed, new.failed, new.retried, new.cancelled)
  ON CONFLICT (minute, type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
END;
--> statement-breakpoint
CREATE TRIGGER metric_growth_update AFTER UPDATE ON metric BEGIN
  UPDATE metric_total SET
    enqueued = enqueued + new.enqueued - old.enqueued, started = started + new.started - old.started,
    completed = completed + new.completed - old.completed, failed = failed + new.failed - old.failed,
    retried = retried + new.retried - old.retried, cancelled = cancelled + new.cancelled - old.cancelled
  WHERE type = new.type;
  UPDATE metric_series SET
    enqueued = enqueued + new.enqueued - old.enqueued, started = started + new.started - old.started,
    completed = completed + new.completed - old.completed, failed = failed + new.failed - old.failed,
    retried = retried + new.retried - old.retried, cancelled = cancelled + new.cancelled - old.cancelled
  WHERE minute = new.minute AND type = new.type;
END;
