import journal from './meta/_journal.json';
import m0000 from './0000_pool.sql';
import m0001 from './0001_key_registry.sql';
import m0002 from './0002_permit_epoch.sql';

  export default {
    journal,
    migrations: {
      m0000,
m0001,
m0002
    }
  }
  