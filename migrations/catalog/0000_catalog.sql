CREATE TABLE `home` (
	`name` text PRIMARY KEY NOT NULL,
	`reported_at` integer NOT NULL,
	`last_served_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `home_type` (
	`home` text NOT NULL,
	`type` text NOT NULL,
	`pending` integer NOT NULL,
	`scheduled` integer NOT NULL,
	`running` integer NOT NULL,
	`completed` integer NOT NULL,
	`failed_retries_exhausted` integer NOT NULL,
	`failed_fatal` integer NOT NULL,
	`failed_stalled` integer NOT NULL,
	`failed_timeout` integer NOT NULL,
	`cancelled` integer NOT NULL,
	`next_run_at` integer,
	PRIMARY KEY(`home`, `type`)
);
--> statement-breakpoint
CREATE INDEX `home_type_type_idx` ON `home_type` (`type`,`next_run_at`);--> statement-breakpoint
CREATE INDEX `home_type_next_idx` ON `home_type` (`next_run_at`);