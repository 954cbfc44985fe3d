CREATE TABLE `pause_watch` (
	`home` text PRIMARY KEY NOT NULL,
	`until` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `pause_watch_until_idx` ON `pause_watch` (`until`);--> statement-breakpoint
CREATE TABLE `type_pause` (
	`type` text PRIMARY KEY NOT NULL,
	`paused` integer NOT NULL,
	`changed_at` integer NOT NULL,
	`version` integer NOT NULL
);
