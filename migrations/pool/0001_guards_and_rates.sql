CREATE TABLE `pool_state` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `permit` ADD `type` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `permit` ADD `cost` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `permit` ADD `rate_cost` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `permit` ADD `window_start` integer;--> statement-breakpoint
ALTER TABLE `waiter` ADD `reserved_until` integer;--> statement-breakpoint
ALTER TABLE `waiter` ADD `reserved_units` integer DEFAULT 0 NOT NULL;