import journal from './meta/_journal.json';
import m0000 from './0000_job.sql';
import m0001 from './0001_job_count_triggers.sql';
import m0002 from './0002_keys_over_time.sql';

  export default {
    journal,
    migrations: {
      m0000,
m0001,
m0002
    }
  }
  