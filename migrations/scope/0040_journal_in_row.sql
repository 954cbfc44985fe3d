-- Custom SQL (drizzle made the rebuild and the column). A job's log lines keyed by (job, place) alone, WITHOUT
-- ROWID, so a line writes one row where it wrote its row and its job_log_job_idx entry; a line's place is now
-- counted per job (job-logs.ts gives it: the job's last place + 1), and the lines kept keep theirs, which grow
-- within each job. The trigger that names the table goes first (a rename checks every trigger) and is made again
-- after. And the job's journal in its own row (`journal`: scope/workflow/journal-row.ts), so a step writes one row.
DROP TRIGGER job_log_delete;--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_job_log` (
	`id` integer NOT NULL,
	`job_seq` integer NOT NULL,
	`at` integer NOT NULL,
	`attempt` integer NOT NULL,
	`message` text NOT NULL,
	`fields` text,
	PRIMARY KEY(`job_seq`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_job_log`("id", "job_seq", "at", "attempt", "message", "fields") SELECT "id", "job_seq", "at", "attempt", "message", "fields" FROM `job_log`;--> statement-breakpoint
DROP TABLE `job_log`;--> statement-breakpoint
ALTER TABLE `__new_job_log` RENAME TO `job_log`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE TRIGGER job_log_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_log WHERE job_seq = old.seq;
END;
--> statement-breakpoint
ALTER TABLE `job` ADD `journal` text;
