/**
 * The scope object's answers as they cross RPC: jobs as the API's views (`Job`,
 * `LeasedJob`), never the table's rows, so nothing outside scope/ depends on
 * a column (api.ts is the door). Converted once, at the object's edge, where
 * the lens shows each value to who asked (sealing/lens.ts: a claim's to its
 * handler, every other view to a reader); the caller opens sealed ones.
 *
 * @module
 */
import type { Journal } from "../job/handler-contract";
import type { FailOutcome, Job, LeasedJob } from "../job/schemas";
import type { DecidingAnswer } from "./batches/batch-stage";
import type { EnqueueOutcome, EnqueueRefusal } from "./jobs/enqueue";
import type { InlineClaim } from "./jobs/inline-claim";
import { toJob, toLeasedJob, type JobRow } from "./jobs/job-row";
import type { Outcome } from "./jobs/outcome";
import type { Lens } from "../sealing/lens";

/**
 * One job's answer to an enqueue: the id of the job made or found (null when its id is only a tombstone now), and,
 * when the caller asked for views, that job (null for a tombstone). A batch asks for ids only by default: the
 * views were a third of a 1,000-job batch's time (docs/design.md "What a job costs").
 */
export type EnqueuedJob = { id: string | null; created: boolean; job?: Job | null };
/** What an enqueue answers per job: `ids`, or `jobs` (the views as well). */
export type EnqueueAnswer = "ids" | "jobs";
export type WireEnqueueOutcome = { ok: true; results: EnqueuedJob[] } | EnqueueRefusal;
export type WireDecidingAnswer = { decision: "commit"; outcome: Extract<WireEnqueueOutcome, { ok: true }>; published?: number } | { decision: "abort"; refusal: EnqueueRefusal | null };
export type WireInlineClaim = { ok: true; job: Job; created: boolean; leased: LeasedJob | null } | EnqueueRefusal;
/** A page of a listing: its jobs and, when more follow, the position (a seq) to go on after. */
export interface JobPage {
  jobs: Job[];
  next: number | null;
}

export function wireEnqueue(lens: Lens, out: Extract<EnqueueOutcome, { ok: true }>, answer?: EnqueueAnswer): Extract<WireEnqueueOutcome, { ok: true }>;
export function wireEnqueue(lens: Lens, out: EnqueueOutcome, answer?: EnqueueAnswer): WireEnqueueOutcome;
export function wireEnqueue(lens: Lens, out: EnqueueOutcome, answer: EnqueueAnswer = "jobs"): WireEnqueueOutcome {
  if (!out.ok) return out;
  const results = out.results.map((r): EnqueuedJob => {
    const id = r.row?.id ?? null;
    return answer === "ids" ? { id, created: r.created } : { id, created: r.created, job: r.row === null ? null : toJob(r.row, lens) };
  });
  return { ok: true, results };
}

export function wireDeciding(lens: Lens, a: DecidingAnswer): WireDecidingAnswer {
  return a.decision === "commit" ? { ...a, outcome: wireEnqueue(lens, a.outcome) } : a;
}

export function wireInline(lens: Lens, out: InlineClaim): WireInlineClaim {
  return out.ok ? { ok: true, job: toJob(out.job, lens), created: out.created, leased: out.leased ? toLeasedJob(out.leased, lens) : null } : out;
}

/** wireSettled: a write's outcome with its row as the job's view (`job`). */
export function wireSettled(lens: Lens, out: Outcome<{ row: JobRow; outcome: FailOutcome }>): Outcome<{ job: Job; outcome: FailOutcome }>;
export function wireSettled(lens: Lens, out: Outcome<{ row: JobRow }>): Outcome<{ job: Job }>;
export function wireSettled(lens: Lens, out: Outcome<{ row: JobRow; outcome?: FailOutcome }>): Outcome<{ job: Job; outcome?: FailOutcome }> {
  if (!out.ok) return out;
  const { row, ...rest } = out;
  return { ...rest, job: toJob(row, lens) };
}

export function wireLeased(lens: Lens, rows: readonly (JobRow & { journal?: Journal })[]): LeasedJob[] {
  return rows.map((r) => toLeasedJob(r, lens));
}

/** wirePage: `limit + 1` rows read, `limit` answered; `next` is the last answered row's seq when more follow. */
export function wirePage(lens: Lens, rows: readonly JobRow[], limit: number): JobPage {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { jobs: page.map((r) => toJob(r, lens)), next: rows.length > limit && last ? last.seq : null };
}
