CREATE TABLE `permit` (
	`id` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`expires_at` integer NOT NULL,
	`type` text DEFAULT '' NOT NULL,
	`cost` integer DEFAULT 1 NOT NULL,
	`rate_cost` integer DEFAULT 0 NOT NULL,
	`window_start` integer
);
--> statement-breakpoint
CREATE INDEX `permit_expires_idx` ON `permit` (`expires_at`);--> statement-breakpoint
CREATE TABLE `pool_state` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `waiter` (
	`holder` text NOT NULL,
	`type` text DEFAULT '' NOT NULL,
	`since` integer NOT NULL,
	`reserved_until` integer,
	`reserved_units` integer DEFAULT 0 NOT NULL,
	`seen_at` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`holder`, `type`)
);
--> statement-breakpoint
CREATE INDEX `waiter_since_idx` ON `waiter` (`since`);