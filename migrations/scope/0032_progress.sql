ALTER TABLE `job` ADD `progress` text;--> statement-breakpoint
ALTER TABLE `job` ADD `progress_at` integer;