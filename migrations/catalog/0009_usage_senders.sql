CREATE TABLE `usage_sender` (
	`name` text PRIMARY KEY NOT NULL,
	`object` text NOT NULL,
	`instance` text NOT NULL,
	`at` integer NOT NULL,
	`rows_written` integer NOT NULL,
	`rows_read` integer NOT NULL,
	`requests` integer NOT NULL,
	`active_ms` integer NOT NULL,
	`setup_rows_written` integer DEFAULT 0 NOT NULL,
	`setup_rows_read` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE `object_usage` ADD `setup_rows_written` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `object_usage` ADD `setup_rows_read` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_minute` ADD `setup_rows_written` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_minute` ADD `setup_rows_read` integer DEFAULT 0 NOT NULL;