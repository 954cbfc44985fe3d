CREATE TABLE `callback_out` (
	`seq` integer PRIMARY KEY NOT NULL,
	`job_seq` integer NOT NULL,
	`state` text NOT NULL,
	`ended_at` integer NOT NULL,
	`next_at` integer NOT NULL,
	`tries` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`dead_at` integer
);
--> statement-breakpoint
ALTER TABLE `job` ADD `callback` text;