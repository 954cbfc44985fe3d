import journal from './meta/_journal.json';
import m0000 from './0000_job.sql';
import m0001 from './0001_job_count_triggers.sql';
import m0002 from './0002_keys_over_time.sql';
import m0003 from './0003_job_history.sql';
import m0004 from './0004_job_history_triggers.sql';
import m0005 from './0005_job_steps.sql';
import m0006 from './0006_job_step_triggers.sql';
import m0007 from './0007_job_permits.sql';
import m0008 from './0008_job_backoff.sql';
import m0009 from './0009_job_tombstones.sql';
import m0010 from './0010_type_pause.sql';
import m0011 from './0011_job_logs.sql';
import m0012 from './0012_job_log_triggers.sql';
import m0013 from './0013_superseded_state.sql';
import m0014 from './0014_ordered_head.sql';
import m0015 from './0015_batch_stage.sql';
import m0016 from './0016_journaled_keys.sql';
import m0017 from './0017_tally_own_id.sql';
import m0018 from './0018_tallied_triggers.sql';
import m0019 from './0019_ordered_live.sql';
import m0020 from './0020_drop_due_idx.sql';
import m0021 from './0021_type_count.sql';
import m0022 from './0022_drop_job_count.sql';
import m0023 from './0023_key_idx.sql';
import m0024 from './0024_id_seq.sql';
import m0025 from './0025_pushed_leases.sql';
import m0026 from './0026_completed_unindexed.sql';
import m0027 from './0027_waiting_state.sql';
import m0028 from './0028_invokes_outbox.sql';
import m0029 from './0029_event_waits.sql';
import m0030 from './0030_limit_key.sql';
import m0031 from './0031_expired_state.sql';
import m0032 from './0032_progress.sql';
import m0033 from './0033_callbacks.sql';
import m0034 from './0034_callback_triggers.sql';
import m0035 from './0035_trace.sql';
import m0036 from './0036_callback_ending.sql';
import m0037 from './0037_callback_ending_trigger.sql';
import m0038 from './0038_stage_without_rowid.sql';
import m0039 from './0039_transition_without_rowid.sql';
import m0040 from './0040_journal_in_row.sql';
import m0041 from './0041_held_retries.sql';
import m0042 from './0042_logs_and_history_in_row.sql';
import m0043 from './0043_reruns.sql';
import m0044 from './0044_error_groups.sql';
import m0045 from './0045_nondeterminism_and_code_version.sql';
import m0046 from './0046_pause_asked.sql';

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
m0016,
m0017,
m0018,
m0019,
m0020,
m0021,
m0022,
m0023,
m0024,
m0025,
m0026,
m0027,
m0028,
m0029,
m0030,
m0031,
m0032,
m0033,
m0034,
m0035,
m0036,
m0037,
m0038,
m0039,
m0040,
m0041,
m0042,
m0043,
m0044,
m0045,
m0046
    }
  }
  