DROP INDEX `job_dedupe_idx`;--> statement-breakpoint
DROP INDEX `job_dedupe_running_idx`;--> statement-breakpoint
DROP INDEX `job_key_started_idx`;--> statement-breakpoint
CREATE INDEX `job_key_idx` ON `job` (`dedupe_key`) WHERE dedupe_key IS NOT NULL;