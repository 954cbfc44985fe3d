-- Spend caps (src/catalog/budgets.ts; docs/operating.md "Spend caps"): each budget's state in its window.
CREATE TABLE `budget_state` (
	`name` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`soft_at` integer,
	`hard_at` integer,
	`paused` text,
	`lifted_at` integer
);
