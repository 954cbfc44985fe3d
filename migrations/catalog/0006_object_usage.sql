CREATE TABLE `object_usage` (
	`object` text PRIMARY KEY NOT NULL,
	`rows_written` integer NOT NULL,
	`rows_read` integer NOT NULL,
	`requests` integer NOT NULL,
	`active_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `usage_minute` (
	`minute` integer NOT NULL,
	`object` text NOT NULL,
	`rows_written` integer NOT NULL,
	`rows_read` integer NOT NULL,
	`requests` integer NOT NULL,
	`active_ms` integer NOT NULL,
	PRIMARY KEY(`minute`, `object`)
);
