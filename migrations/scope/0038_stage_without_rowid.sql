-- Custom SQL (drizzle made only the DROP INDEX): the parts and decisions of batches over several objects
-- (scope/batches/batch-stage.ts) rebuilt WITHOUT ROWID, keyed by their primary key alone: a staged part writes one
-- row, where it wrote three (its row, its key's entry, and a staged_at entry no query read); a decision two (its row
-- and its decided_at entry), where it wrote three (docs/design.md "What a job costs").
DROP INDEX `job_stage_staged_idx`;--> statement-breakpoint
CREATE TABLE `job_stage_new` (
	`batch` text NOT NULL,
	`idx` integer NOT NULL,
	`job` text NOT NULL,
	`staged_at` integer NOT NULL,
	`decider` text NOT NULL,
	PRIMARY KEY(`batch`, `idx`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `job_stage_new` SELECT batch, idx, job, staged_at, decider FROM `job_stage`;--> statement-breakpoint
DROP TABLE `job_stage`;--> statement-breakpoint
ALTER TABLE `job_stage_new` RENAME TO `job_stage`;--> statement-breakpoint
DROP INDEX `batch_decision_at_idx`;--> statement-breakpoint
CREATE TABLE `batch_decision_new` (
	`batch` text PRIMARY KEY NOT NULL,
	`decision` text NOT NULL,
	`decided_at` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `batch_decision_new` SELECT batch, decision, decided_at FROM `batch_decision`;--> statement-breakpoint
DROP TABLE `batch_decision`;--> statement-breakpoint
ALTER TABLE `batch_decision_new` RENAME TO `batch_decision`;--> statement-breakpoint
CREATE INDEX `batch_decision_at_idx` ON `batch_decision` (`decided_at`);
