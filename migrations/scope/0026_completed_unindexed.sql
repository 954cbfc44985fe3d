DROP INDEX `job_finished_idx`;--> statement-breakpoint
CREATE INDEX `job_finished_idx` ON `job` (`state`,`finished_at`) WHERE finished_at IS NOT NULL AND state <> 'completed';