DROP INDEX `job_claim_idx`;--> statement-breakpoint
DROP INDEX `job_dedupe_idx`;--> statement-breakpoint
ALTER TABLE `job` ADD `dedupe_mode` text;--> statement-breakpoint
ALTER TABLE `job` ADD `scheduled_for` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `job_dedupe_pending_idx` ON `job` (`dedupe_key`) WHERE dedupe_key IS NOT NULL AND state = 'pending';--> statement-breakpoint
CREATE INDEX `job_dedupe_running_idx` ON `job` (`dedupe_key`) WHERE dedupe_key IS NOT NULL AND state = 'running';--> statement-breakpoint
CREATE INDEX `job_key_started_idx` ON `job` (`dedupe_key`,`started_at`) WHERE dedupe_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `job_claim_idx` ON `job` (`type`,"priority" DESC,`run_at`,`seq`,`dedupe_key`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `job_dedupe_idx` ON `job` (`dedupe_key`) WHERE dedupe_key IS NOT NULL AND state IN ('pending', 'running');