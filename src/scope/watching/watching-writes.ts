/**
 * The watching capability's writes: progress kept under a lease, a pull
 * worker's log lines — they change nothing anyone counts but the job's
 * watchers (jobs/changes.ts `progressed`).
 *
 * @module
 */
import { nothing, written, type Written } from "../jobs/changes";
import type { HomeStore } from "../jobs/home-store";
import { appendLeasedLogs, type WorkerLogItem } from "../jobs/job-logs";
import { refused } from "../jobs/job-writes";
import type { Outcome, Refusal } from "../jobs/outcome";
import { setProgress, type ProgressItem } from "./progress";

export const watchingWrites = {
  /** progress: holders' reports kept under their leases (progress.ts); a report changes nothing anyone counts. */
  progress(store: HomeStore, items: readonly ProgressItem[], now: number): Written<({ ok: true; at: number } | Refusal)[]> {
    const { answers, rows } = setProgress(store, items, now);
    const lost = items.length === 1 && !answers[0]!.ok ? refused(store, "progress", items[0]!.id, answers[0] as Refusal) : nothing();
    return written(answers, rows.length > 0 ? { ...nothing(), progressed: rows } : lost);
  },

  /** appendLogs: a pull worker's lines under its lease (job-logs.ts); they change nothing anyone counts but its watchers. */
  appendLogs(store: HomeStore, id: string, token: string, items: readonly WorkerLogItem[], now: number): Written<Outcome<{ stored: number }>> {
    return written(appendLeasedLogs(store, id, token, items, now), nothing());
  },
};
