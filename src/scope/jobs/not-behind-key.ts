/**
 * What "due" means for a job with a dedupe key (docs/guards.md): not behind its key's running job. Its own
 * module, so the claim (claim.ts) and the keyed claim (keyed-claim.ts) share it.
 *
 * @module
 */

/**
 * NOT_BEHIND_KEY: the pending job `j` is not a follower waiting behind its
 * key's running (or waiting: waits.ts) job, nor behind an older pending job of its key (one with a
 * journal, back to pending — attempt-end.ts: never superseded). Part of what
 * "due" means, for every query that asks — the claim, and the dispatcher's due
 * counts. job_dedupe_idx holds only live jobs, so it reads the key's one or two.
 */
export const NOT_BEHIND_KEY = `(j.dedupe_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM job AS r WHERE r.dedupe_key = j.dedupe_key AND r.dedupe_key IS NOT NULL
           AND (r.state IN ('running', 'waiting') OR (r.state = 'pending' AND r.seq < j.seq))))`;
