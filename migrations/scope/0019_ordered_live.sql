DROP INDEX `job_live_seq_idx`;--> statement-breakpoint
ALTER TABLE `job` ADD `ordered` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX `job_ordered_live_idx` ON `job` (`type`,`seq`) WHERE ordered = 1 AND state IN ('pending', 'running');