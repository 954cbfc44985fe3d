CREATE TABLE `metric_series` (
	`minute` integer NOT NULL,
	`type` text NOT NULL,
	`enqueued` integer NOT NULL,
	`started` integer NOT NULL,
	`completed` integer NOT NULL,
	`failed` integer NOT NULL,
	`retried` integer NOT NULL,
	`cancelled` integer NOT NULL,
	PRIMARY KEY(`minute`, `type`)
);
