-- Custom SQL migration file, put your code below! --
-- metric_total grows by exactly what metric gained, in the same statement.
-- Reports only ever raise a metric row (applyReport takes the max), so totals
-- never go down and a summary applied twice adds nothing.
CREATE TRIGGER metric_total_insert AFTER INSERT ON metric BEGIN
  INSERT INTO metric_total (type, enqueued, started, completed, failed, retried, cancelled)
  VALUES (new.type, new.enqueued, new.started, new.completed, new.failed, new.retried, new.cancelled)
  ON CONFLICT (type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
END;
--> statement-breakpoint
CREATE TRIGGER metric_total_update AFTER UPDATE ON metric BEGIN
  UPDATE metric_total SET
    enqueued = enqueued + new.enqueued - old.enqueued, started = started + new.started - old.started,
    completed = completed + new.completed - old.completed, failed = failed + new.failed - old.failed,
    retried = retried + new.retried - old.retried, cancelled = cancelled + new.cancelled - old.cancelled
  WHERE type = new.type;
END;
