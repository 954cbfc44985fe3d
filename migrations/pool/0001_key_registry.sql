CREATE TABLE `pool_key` (
	`key` text PRIMARY KEY NOT NULL,
	`active` integer NOT NULL,
	`waiting` integer NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `pool_key_busy_idx` ON `pool_key` ("active" DESC,`key`);