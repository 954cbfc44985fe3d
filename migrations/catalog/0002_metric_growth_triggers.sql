-- Custom SQL migration file, put your code below! --
-- A home's per-minute counters (metric) only grow: applyMetrics keeps the
-- larger of held and reported values, and a report that raises nothing
-- updates nothing. These add exactly each row's growth, in the same
-- statement, to the queue-wide series per (minute, type) and to the totals
-- since the catalog began (which never go down: Prometheus counters).
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
