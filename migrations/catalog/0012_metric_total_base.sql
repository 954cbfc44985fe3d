-- Custom SQL: the totals since the catalog began are now metric_total plus the series' minutes kept
-- (catalog/metrics-store.ts metricTotals): metric_total holds the minutes already dropped, added as they are dropped.
-- A summary's growth then writes its series row alone: the growth triggers no longer write the total's row.
-- What the series holds now is taken out of metric_total, so the totals read the same before and after.
DROP TRIGGER metric_growth_insert;
--> statement-breakpoint
DROP TRIGGER metric_growth_update;
--> statement-breakpoint
CREATE TRIGGER metric_growth_insert AFTER INSERT ON metric BEGIN
  INSERT INTO metric_series (minute, type, enqueued, started, completed, failed, retried, cancelled)
  VALUES (new.minute, new.type, new.enqueued, new.started, new.completed, new.failed, new.retried, new.cancelled)
  ON CONFLICT (minute, type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
END;
--> statement-breakpoint
CREATE TRIGGER metric_growth_update AFTER UPDATE ON metric BEGIN
  UPDATE metric_series SET
    enqueued = enqueued + new.enqueued - old.enqueued, started = started + new.started - old.started,
    completed = completed + new.completed - old.completed, failed = failed + new.failed - old.failed,
    retried = retried + new.retried - old.retried, cancelled = cancelled + new.cancelled - old.cancelled
  WHERE minute = new.minute AND type = new.type;
END;
--> statement-breakpoint
UPDATE metric_total SET
  enqueued = enqueued - coalesce((SELECT sum(s.enqueued) FROM metric_series s WHERE s.type = metric_total.type), 0),
  started = started - coalesce((SELECT sum(s.started) FROM metric_series s WHERE s.type = metric_total.type), 0),
  completed = completed - coalesce((SELECT sum(s.completed) FROM metric_series s WHERE s.type = metric_total.type), 0),
  failed = failed - coalesce((SELECT sum(s.failed) FROM metric_series s WHERE s.type = metric_total.type), 0),
  retried = retried - coalesce((SELECT sum(s.retried) FROM metric_series s WHERE s.type = metric_total.type), 0),
  cancelled = cancelled - coalesce((SELECT sum(s.cancelled) FROM metric_series s WHERE s.type = metric_total.type), 0);
