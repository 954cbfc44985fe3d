DROP INDEX `job_id_idx`;--> statement-breakpoint
ALTER TABLE `job` ADD `id_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `job_id_idx` ON `job` (`id`) WHERE id_seq = 0;