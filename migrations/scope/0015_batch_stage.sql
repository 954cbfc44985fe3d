CREATE TABLE `batch_decision` (
	`batch` text PRIMARY KEY NOT NULL,
	`decision` text NOT NULL,
	`decided_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `batch_decision_at_idx` ON `batch_decision` (`decided_at`);--> statement-breakpoint
CREATE TABLE `job_stage` (
	`batch` text NOT NULL,
	`idx` integer NOT NULL,
	`job` text NOT NULL,
	`staged_at` integer NOT NULL,
	`decider` text NOT NULL,
	PRIMARY KEY(`batch`, `idx`)
);
--> statement-breakpoint
CREATE INDEX `job_stage_staged_idx` ON `job_stage` (`staged_at`);