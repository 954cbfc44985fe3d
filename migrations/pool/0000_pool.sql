CREATE TABLE `permit` (
	`id` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `permit_expires_idx` ON `permit` (`expires_at`);--> statement-breakpoint
CREATE TABLE `waiter` (
	`holder` text PRIMARY KEY NOT NULL,
	`since` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `waiter_since_idx` ON `waiter` (`since`);