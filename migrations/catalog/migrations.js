import journal from './meta/_journal.json';
import m0000 from './0000_catalog.sql';
import m0001 from './0001_metrics.sql';
import m0002 from './0002_metric_growth_triggers.sql';
import m0003 from './0003_claimed_types.sql';
import m0004 from './0004_type_pause.sql';
import m0005 from './0005_superseded_count.sql';
import m0006 from './0006_object_usage.sql';
import m0007 from './0007_waiting_count.sql';
import m0008 from './0008_expired_count.sql';
import m0009 from './0009_usage_senders.sql';
import m0010 from './0010_metric_without_rowid.sql';
import m0011 from './0011_home_type_next_partial.sql';
import m0012 from './0012_metric_total_base.sql';
import m0013 from './0013_pause_watch_without_rowid.sql';
import m0014 from './0014_nondeterminism_kind.sql';
import m0015 from './0015_audit.sql';
import m0016 from './0016_budgets.sql';

  export default {
    journal,
    migrations: {
      m0000,
m0001,
m0002,
m0003,
m0004,
m0005,
m0006,
m0007,
m0008,
m0009,
m0010,
m0011,
m0012,
m0013,
m0014,
m0015,
m0016
    }
  }
  