CREATE TABLE `job_tombstone` (
	`id` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `job_tombstone_expires_idx` ON `job_tombstone` (`expires_at`);