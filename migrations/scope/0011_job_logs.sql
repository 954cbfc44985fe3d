CREATE TABLE `job_log` (
	`id` integer PRIMARY KEY NOT NULL,
	`job_seq` integer NOT NULL,
	`at` integer NOT NULL,
	`attempt` integer NOT NULL,
	`message` text NOT NULL,
	`fields` text
);
--> statement-breakpoint
CREATE INDEX `job_log_job_idx` ON `job_log` (`job_seq`,`id`);