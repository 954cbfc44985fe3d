CREATE TABLE `claimed_type` (
	`type` text PRIMARY KEY NOT NULL,
	`asked_at` integer NOT NULL
);
