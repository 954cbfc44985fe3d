-- Custom SQL migration file, put your code below! --
-- The growth of each metric row now also lands in metric_series (type, minute),
-- and a report that raises nothing writes nothing (applyMetrics' upsert only
-- updates when a value grew), so these fire only on real change.
DROP TRIGGER metric_total_insert;
--> statement-breakpoint
DROP TRIGGER metric_total_update;
--> statement-breakpoint
CREATE TRIGGER metric_growth_insert AFTER INSERT ON metric BEGIN
  INSERT INTO metric_total (type, enqueued, started, completed, failed, retried, cancelled)
  VALUES (new.type, new.enqueued, new.started, new.completed, new.failed, new.retried, new.cancelled)
  ON CONFLICT (type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
  INSERT INTO metric_series (minute, type, enqueued, started, completed, failed, retried, cancelled)
  VALUES (new.minute, new.type, new.enqueued, new.started, new.completed, new.failed, new.retried, new.cancelled)
  ON CONFLICT (minute, type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
END;
--> statement-breakpoint
CREATE TRIGGER metric_growth_update AFTER UPDATE ON metric BEGIN
  UPDATE metric_total SET
    enqueued = enqueued + new.enqueued - old.enqueued, started = started + new.started - old.started,
    completed = completed + new.completed - old.completed, failed = failed + new.failed - old.failed,
    retried = retried + new.retried - old.retried, cancelled = cancelled + new.cancelled - old.cancelled
  WHERE type = new.type;
  UPDATE metric_series SET
    enqueued = enqueued + new.enqueued - old.enqueued, started = started + new.started - old.started,
    completed = completed + new.completed - old.completed, failed = failed + new.failed - old.failed,
    retried = retried + new.retried - old.retried, cancelled = cancelled + new.cancelled - old.cancelled
  WHERE minute = new.minute AND type = new.type;
END;
