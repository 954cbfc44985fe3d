/**
 * Rerun (docs/workflows.md "Rerun from a step"): a new job made from a finished one — the same type, scope,
 * options and guards, its payload or a new one — in the same object, linked both ways (`rerun_of` on the new job,
 * `reruns` on the old). From a step (`fromStep`), the new job's journal holds the old one's entries before that
 * step's position, results and all, so its replay returns them without running them again and runs that step and
 * everything after; without one, it starts over. Cloudflare Workflows' restart from a step, DBOS's fork, Hatchet's
 * and Trigger.dev's replay with new input.
 *
 * @module
 */
import { TERMINAL_STATES } from "../../job/states";
import type { KeyMode } from "../../job/key-mode";
import { newLocalId } from "../../job/home";
import { enqueueJobs, type NewJob } from "../jobs/enqueue";
import { oneJobRow, scopeOfRow, type JobRow } from "../jobs/job-row";
import type { Outcome } from "../jobs/outcome";
import { getJob, liveJobsOfKey, type ListFilter } from "../jobs/read";
import { nextOf, pageOf } from "../jobs/bulk";
import type { HomeStore } from "../jobs/home-store";
import { journalsOf } from "./steps";
import { copyJournalBefore } from "./journal-row";

const LINK_SET = "UPDATE job SET rerun_of = ?2 WHERE seq = ?1 RETURNING *";
const RERUN_NOTED = "UPDATE job SET reruns = json_insert(coalesce(reruns, '[]'), '$[#]', ?2) WHERE seq = ?1 RETURNING *";

export interface RerunInput {
  /** The step to run again from (a name in the journal); null: from the start. */
  fromStep: string | null;
  /** The new job's payload (JSON text); null: the old job's. */
  payload: string | null;
}

/** rerunJob: the new job (`row`) and the old one with its link (`of`), or why not — nothing written then. */
export function rerunJob(store: HomeStore, id: string, input: RerunInput, now: number): Outcome<{ row: JobRow; of: JobRow }> {
  return store.atomic(() => {
    const old = getJob(store.sql, id);
    if (!old) return { ok: false, code: "not_found" };
    if (!(TERMINAL_STATES as readonly string[]).includes(old.state)) {
      return { ok: false, code: "conflict", reason: `it is ${old.state}; a rerun is made of a finished job (cancel it first, or wait for its end)`, state: old.state };
    }
    let cut: number | null = null;
    if (input.fromStep !== null) {
      const entries = journalsOf(store, [old]).get(old.seq)?.entries ?? [];
      const at = entries.find((e) => e.name === input.fromStep);
      if (!at) {
        const held = [...new Set(entries.map((e) => e.name))];
        const which = held.length === 0 ? "it has no journal" : `it holds ${held.slice(0, 10).map((n) => JSON.stringify(n)).join(", ")}${held.length > 10 ? ", …" : ""}`;
        return { ok: false, code: "invalid", path: "fromStep", reason: `job ${old.id}'s journal holds no step ${JSON.stringify(input.fromStep)} (${which})` };
      }
      const open = entries.find((e) => e.seq < at.seq && e.finishedAt === null);
      if (open) {
        return { ok: false, code: "invalid", path: "fromStep", reason: `step ${JSON.stringify(open.name)} before ${JSON.stringify(input.fromStep)} never finished, so it has no result to keep: rerun from it, or from the start` };
      }
      // A wait token is signed for its job (job/wait-token.ts): kept, it would still complete the old job's wait.
      const token = entries.find((e) => e.seq < at.seq && e.kind === "token");
      if (token) {
        return { ok: false, code: "invalid", path: "fromStep", reason: `wait token ${JSON.stringify(token.name)} before ${JSON.stringify(input.fromStep)} was made for job ${old.id} and completes only its wait: rerun from ${JSON.stringify(token.name)} or before it` };
      }
      cut = at.seq;
    }
    if (old.dedupe_key !== null) {
      const holder = liveJobsOfKey(store.sql, old.dedupe_key)[0];
      if (holder) return { ok: false, code: "conflict", reason: `live job ${holder.id} holds its dedupe key ${JSON.stringify(old.dedupe_key)}`, state: old.state };
    }
    const out = enqueueJobs(store, [fromRow(old, input.payload, now)], now, { seqIds: true });
    if (!out.ok) return { ok: false, code: "conflict", reason: out.message, state: old.state };
    const made = out.results[0]!.row!;
    // Its journal's kept part (and its link) before the commit: whoever claims it replays from them.
    const row = cut === null ? oneJobRow(store.sql.exec(LINK_SET, made.seq, old.id)) : copyJournalBefore(store, old.seq, made.seq, cut, old.id);
    const of = oneJobRow(store.sql.exec(RERUN_NOTED, old.seq, row.id));
    return { ok: true, row, of };
  });
}

/** fromRow: the new job as its enqueue takes it — the old one's options, due now, with an id its seq makes. */
function fromRow(old: JobRow, payload: string | null, now: number): NewJob {
  return {
    id: `${old.id.slice(0, old.id.indexOf(".") + 1)}${newLocalId(now)}`,
    idFromQueue: true,
    ownId: false,
    type: old.type,
    payload: payload ?? old.payload,
    scope: scopeOfRow(old),
    dedupeKey: old.dedupe_key,
    keyMode: old.dedupe_key === null ? null : ((old.dedupe_mode ?? "active") as KeyMode),
    priority: old.priority,
    runAt: null,
    delayMs: 0,
    maxAttempts: old.max_attempts,
    timeoutMs: old.timeout_ms,
    tags: JSON.parse(old.tags) as string[],
    backoff: old.backoff,
    limitKey: old.limit_key,
    callback: old.callback,
    trace: old.trace,
  };
}

/**
 * rerunPage: a bulk rerun's page (docs/http-api.md "Bulk actions") — at most `limit` finished jobs matching `filter`
 * after `afterSeq`, each rerun as `rerunJob` would (from `fromStep`, or the start); a job whose journal lacks the
 * step, or whose key a live job holds, is skipped. Its reruns are created after every job this page looks at, and
 * the coordinator bounds the walk by creation time, so a walk never reruns its own reruns.
 */
export function rerunPage(store: HomeStore, filter: ListFilter, afterSeq: number, limit: number, fromStep: string | null, now: number): { made: JobRow[]; skipped: number; next: number | null } {
  const page = pageOf(store.sql, "rerun", filter, afterSeq, limit);
  const made: JobRow[] = [];
  for (const job of page) {
    const out = rerunJob(store, job.id, { fromStep, payload: null }, now);
    if (out.ok) made.push(out.row);
  }
  return { made, skipped: page.length - made.length, next: nextOf(page, limit) };
}
