-- home_type_next_idx holds only rows with a pending job (a summary that clears next_run_at writes no entry), and
-- object_usage becomes the base the kept minutes add to (catalog/usage-store.ts): what usage_minute holds now is
-- taken out of it, so the totals read the same before and after.
DROP INDEX `home_type_next_idx`;--> statement-breakpoint
CREATE INDEX `home_type_next_idx` ON `home_type` (`next_run_at`) WHERE next_run_at IS NOT NULL;--> statement-breakpoint
UPDATE object_usage SET
  rows_written = rows_written - coalesce((SELECT sum(m.rows_written) FROM usage_minute m WHERE m.object = object_usage.object), 0),
  rows_read = rows_read - coalesce((SELECT sum(m.rows_read) FROM usage_minute m WHERE m.object = object_usage.object), 0),
  requests = requests - coalesce((SELECT sum(m.requests) FROM usage_minute m WHERE m.object = object_usage.object), 0),
  active_ms = active_ms - coalesce((SELECT sum(m.active_ms) FROM usage_minute m WHERE m.object = object_usage.object), 0),
  setup_rows_written = setup_rows_written - coalesce((SELECT sum(m.setup_rows_written) FROM usage_minute m WHERE m.object = object_usage.object), 0),
  setup_rows_read = setup_rows_read - coalesce((SELECT sum(m.setup_rows_read) FROM usage_minute m WHERE m.object = object_usage.object), 0);
