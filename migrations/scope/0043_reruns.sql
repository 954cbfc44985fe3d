ALTER TABLE `job` ADD `rerun_of` text;--> statement-breakpoint
ALTER TABLE `job` ADD `reruns` text;