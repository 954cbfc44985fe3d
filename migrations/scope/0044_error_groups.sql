-- Custom SQL: WITHOUT ROWID, so a group's write is its row alone (no key index entry beside it).
CREATE TABLE `error_group` (
	`type` text NOT NULL,
	`fingerprint` text NOT NULL,
	`kind` text NOT NULL,
	`message` text NOT NULL,
	`frame` text,
	`sample` text NOT NULL,
	`first_at` integer NOT NULL,
	`first_job` text NOT NULL,
	`last_at` integer NOT NULL,
	`last_job` text NOT NULL,
	`total` integer NOT NULL,
	`buckets` text NOT NULL,
	`recent` text NOT NULL,
	PRIMARY KEY(`type`, `fingerprint`)
) WITHOUT ROWID;
