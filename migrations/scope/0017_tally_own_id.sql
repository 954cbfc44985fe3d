ALTER TABLE `job` ADD `tally` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `job` ADD `own_id` integer DEFAULT 1 NOT NULL;