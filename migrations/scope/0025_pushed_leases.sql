DROP INDEX `job_lease_idx`;--> statement-breakpoint
ALTER TABLE `job` ADD `lease_kept` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX `job_lease_idx` ON `job` (`lease_expires_at`) WHERE state = 'running' AND lease_kept = 1;