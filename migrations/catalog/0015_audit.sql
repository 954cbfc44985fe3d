-- The audit list (src/catalog/audit-store.ts; docs/operating.md "Tokens and roles"): operator actions with the
-- token that made them, in the main catalog object.
CREATE TABLE `audit_entry` (
	`id` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`token` text NOT NULL,
	`role` text NOT NULL,
	`action` text NOT NULL,
	`detail` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_entry_at_idx` ON `audit_entry` (`at`);