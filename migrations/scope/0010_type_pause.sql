CREATE TABLE `type_pause` (
	`type` text PRIMARY KEY NOT NULL
);
