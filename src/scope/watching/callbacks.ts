/**
 * Completion callbacks (docs/http-api.md "Completion callbacks"): a job enqueued with `callback: {url, on}` owes a
 * POST of its view to `url` when it ends in a state of `on`. The job_callback trigger (migration 0034) writes the row
 * in the very transaction that ended the job, so a crash loses none; the sender posts it right after the commit
 * (`kick`, not awaited) and again from the alarm until the URL answers 2xx — then the row is deleted, so an
 * acknowledged callback is never sent again — or until CALLBACK_TRIES tries failed: then it is kept, dead, for
 * `GET /v1/callbacks/dead`. At least once: a receiver that acknowledged while this object died before deleting
 * the row is called again with the same `Edgequeue-Delivery` (`<job id>:<when it ended>`: a job retried by hand that ends again is another).
 *
 * Each POST is signed: `Edgequeue-Signature: t=<unix ms>,v1=<hex HMAC-SHA256 of "<t>.<url>.<body>">` under
 * EDGEQUEUE_CALLBACK_SECRET, the URL exactly as the enqueue gave it, so a body signed for one receiver is refused by
 * another. A redirect is never followed: a 3xx is a failed try (the signed body must not travel to a host the caller
 * did not name). Where a callback may go at all is checked at the enqueue (job/callback-url.ts).
 *
 * @module
 */
import type { TerminalState } from "../../job/states";
import { DeadlineError, withTimeout } from "../../deadlines";
import { SendRounds } from "../../send-rounds";
import { jobRows, toJob, type JobRow } from "../jobs/job-row";
import type { Lens } from "../../sealing/lens";

/** Tries before a callback is dead (1 + 2 + … + 256 s: about 8.5 minutes of backoff). */
export const CALLBACK_TRIES = 10;
/**
 * How long an owed callback waits for the send right after its commit before the alarm sends it (migration 0034's
 * trigger writes the same 5000, as the outbox's OUTBOX_GRACE_MS).
 */
export const CALLBACK_GRACE_MS = 5_000;
/** A POST not answered by then failed. */
const CALLBACK_TIMEOUT_MS = 10_000;
/** A failed try is tried again after min(CALLBACK_BACKOFF_MAX_MS, 1 s · 2^tries). */
const CALLBACK_BACKOFF_MAX_MS = 300_000;
/** Callbacks one round sends at most, in parallel (each a subrequest). */
const CALLBACK_PAGE = 32;

/**
 * callbackDue: what is due at ?1; a round a commit asked for (?3 = 1) also takes what was owed since and is still
 * within its grace (never tried) — not a row backing off after a failed try.
 */
const DUE = `
SELECT seq, job_seq, ended_at, ending FROM callback_out
 WHERE dead_at IS NULL AND (next_at <= ?1 OR (?3 = 1 AND tries = 0 AND next_at <= ?1 + ${CALLBACK_GRACE_MS}))
 ORDER BY next_at LIMIT ?2`;
const JOBS = "SELECT * FROM job WHERE seq IN (SELECT value FROM json_each(?1))";
const DONE = "DELETE FROM callback_out WHERE seq = ?";
const LATER = `
UPDATE callback_out SET tries = tries + 1, last_error = ?2,
       next_at = ?3 + min(${CALLBACK_BACKOFF_MAX_MS}, 1000 * (1 << min(tries, 20))),
       dead_at = CASE WHEN tries + 1 >= ${CALLBACK_TRIES} THEN ?3 END
 WHERE seq = ?1`;
const DEAD = `
SELECT c.state, c.tries, c.last_error, c.dead_at, j.id, j.type, j.callback FROM callback_out AS c JOIN job AS j ON j.seq = c.job_seq
 WHERE c.dead_at IS NOT NULL ORDER BY c.dead_at, c.seq LIMIT ?1`;

export interface DeadCallback {
  jobId: string;
  type: string;
  url: string;
  state: string;
  tries: number;
  lastError: string | null;
  deadAt: number;
}

/** deadCallbacks: the object's dead callbacks, oldest first. */
export function deadCallbacks(sql: SqlStorage, limit: number): DeadCallback[] {
  return sql
    .exec<{ state: string; tries: number; last_error: string | null; dead_at: number; id: string; type: string; callback: string }>(DEAD, limit)
    .toArray()
    .map((r) => ({ jobId: r.id, type: r.type, url: (JSON.parse(r.callback) as { url: string }).url, state: r.state, tries: r.tries, lastError: r.last_error, deadAt: r.dead_at }));
}

/** sign: the Edgequeue-Signature header of a body sent at `t` (unix ms). */
export async function signCallback(secret: string, t: number, url: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${t}.${url}.${body}`)));
  return `t=${t},v1=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A callback owed (callback_out): `ending`, the ending's own fields when a manual retry has undone it since. */
type Owed = {
  seq: number;
  job_seq: number;
  ended_at: number;
  ending: string | null;
};

export interface CallbackDeps {
  sql: SqlStorage;
  /** A callback's body is a reader's view: opened, a sensitive type's values redacted (sealing/lens.ts). */
  lens: Lens;
  now(): number;
  secret(): string | null;
  fetch(request: Request): Promise<Response>;
  keepAlive(p: Promise<unknown>): void;
  /** Set the alarm anew: a callback is left for later. */
  rearm(): Promise<void>;
}

/** The completion callbacks' sender: `kick` after a commit, `flushDue` from the alarm (send-rounds.ts). */
export class CallbackSender extends SendRounds {
  constructor(private readonly d: CallbackDeps) {
    super({ keepAlive: d.keepAlive, rearm: d.rearm, failure: "callback:send_failed" });
  }

  /** page: the due callbacks (`fresh`: those within their grace too), sent at once. */
  protected async page(fresh: boolean): Promise<"empty" | "more" | "last"> {
    const due = this.d.sql.exec<Owed>(DUE, this.d.now(), CALLBACK_PAGE, fresh ? 1 : 0).toArray();
    if (due.length === 0) return "empty";
    const jobs = new Map(jobRows(this.d.sql.exec(JOBS, JSON.stringify(due.map((d) => d.job_seq)))).map((r) => [r.seq, r]));
    await Promise.all(due.map((d) => this.send(d, jobs.get(d.job_seq))));
    return due.length < CALLBACK_PAGE ? "last" : "more";
  }

  private async send(owed: Owed, current: JobRow | undefined): Promise<void> {
    const { seq } = owed;
    const later = (error: string) => {
      this.d.sql.exec(LATER, seq, error.slice(0, 1000), this.d.now());
      console.warn(JSON.stringify({ event: "callback:failed", id: current?.id ?? null, error }));
    };
    // Its job is gone (deleted with its rows by then, or never had a callback): nothing to send.
    if (!current || current.callback === null) return void this.d.sql.exec(DONE, seq);
    const secret = this.d.secret();
    if (!secret) return later("EDGEQUEUE_CALLBACK_SECRET is not set (wrangler secret put EDGEQUEUE_CALLBACK_SECRET)");
    const { url } = JSON.parse(current.callback) as { url: string };
    // The ending this callback was owed for: a manual retry since has kept its fields (migration 0037).
    const row: JobRow = owed.ending === null ? current : { ...current, ...(JSON.parse(owed.ending) as Partial<JobRow>) };
    const body = JSON.stringify({ job: await this.d.lens.openDeep(toJob(row, this.d.lens), "reader") });
    const t = this.d.now();
    try {
      const res = await withTimeout(
        this.d.fetch(
          new Request(url, {
            method: "POST",
            body,
            redirect: "manual",
            headers: {
              "content-type": "application/json",
              "user-agent": "edgequeue-callback",
              "edgequeue-signature": await signCallback(secret, t, url, body),
              "edgequeue-delivery": `${row.id}:${owed.ended_at}`,
            },
          }),
        ),
        CALLBACK_TIMEOUT_MS,
      );
      await res.body?.cancel();
      if (res.status >= 200 && res.status < 300) this.d.sql.exec(DONE, seq);
      else if (res.status >= 300 && res.status < 400) later(`answered ${res.status}: redirects are not followed (give the final URL)`);
      else later(`answered ${res.status}`);
    } catch (e) {
      // Only whether it answered, not the network's own words: the dead list must not map a network for its reader.
      later(e instanceof DeadlineError ? `no answer within ${CALLBACK_TIMEOUT_MS / 1000} s` : "no answer (the connection failed)");
    }
  }
}
