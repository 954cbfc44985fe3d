/**
 * The lease fence every holder's call passes (invariant 3): the right token
 * on an unexpired lease, and — when it fails — the refusal that says why.
 *
 * @module
 */
import { NEWER_OF_KEY } from "./key-cancel";
import type { Refusal } from "./outcome";
import { byId, getJob } from "./read";
import { timedOut } from "./job-row";
import type { HomeStore } from "./home-store";

/**
 * leased: the live lease — right token, not yet expired (only running jobs hold a token). Params ?1 now, ?2 id,
 * ?3 token, and `seq` the parameter holding idSeq(id) (read.ts, byId).
 */
export const leased = (seq: string) => `${byId("?2", seq)} AND lease_token = ?3 AND lease_expires_at > ?1`;

/** jobFindLeased: the job, if this lease on it is live. Params ?1 now, ?2 id, ?3 token, ?4 idSeq(id). */
export const JOB_FIND_LEASED = `SELECT * FROM job WHERE ${leased("?4")}`;

/** leaseRefusal explains why a fenced call matched nothing. */
export function leaseRefusal(store: HomeStore, id: string, token: string, now: number): Refusal {
  const row = getJob(store.sql, id);
  if (!row) return { ok: false, code: "not_found" };
  switch (row.state) {
    case "cancelled":
      return { ok: false, code: "lease_lost", reason: "cancelled", state: row.state };
    case "superseded":
      // Superseded by a newer job of its key while its holder ran it (key-cancel.ts): ended under it, as a cancel.
      if (row.cancel_reason?.startsWith(NEWER_OF_KEY)) return { ok: false, code: "lease_lost", reason: "cancelled", state: row.state };
      // Superseded at its own holder's fail, release or reap: the attempt is over, as for failed.
      return { ok: false, code: "already_terminal", state: row.state };
    case "completed":
    case "failed":
    // Expired before this attempt started: a write naming it is late or forged, as for a finished job.
    case "expired":
      return { ok: false, code: "already_terminal", state: row.state };
    case "pending":
    // Its attempt ended in a wait (the write came late, or twice): this holder's lease is gone.
    case "waiting":
      return { ok: false, code: "lease_lost", reason: "expired", state: row.state };
    case "running": {
      if (row.lease_token !== token) return { ok: false, code: "lease_lost", reason: "stale_token", state: row.state };
      return { ok: false, code: "lease_lost", reason: timedOut(row, now) ? "timeout" : "expired", state: row.state };
    }
  }
}
