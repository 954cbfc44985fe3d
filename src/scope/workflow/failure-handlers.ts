/**
 * Failure handlers (docs/workflows.md "Failure handlers"): a job of a type with `onFailure` that fails owes, in the
 * transaction that failed it, the enqueue of one job of the handler type in the same scope, with payload `{"job":
 * <the failed job's view>}` (outbox.ts). Its id is derived from the failed job's id and the time it failed, so the
 * owed enqueue sent twice creates one job, and the same job failing again after a retry by hand gets a handler of
 * its own. The handler job carries ON_FAILURE_TAG; its own failure owes nothing.
 *
 * @module
 */
import { QueueError } from "../../errors";
import { hash128Hex } from "../../job/derived-id";
import { abandonWaits } from "./invokes";
import type { HomeStore } from "../jobs/home-store";
import { scopeOfRow, toJob, type JobRow } from "../jobs/job-row";
import { prepareJob } from "../jobs/new-job";
import { owe } from "./outbox";

/** The tag a failure handler's job carries (and why its own failure triggers none). */
export const ON_FAILURE_TAG = "edgequeue:onfailure";

/** failed: what a job's failure owes, inside the transaction that failed it — its handler, and cancels for its children. */
export function owedOnFailure(store: HomeStore, row: JobRow, now: number): void {
  abandonWaits(store, [row], now);
  const handler = store.config.typeSettings(row.type).onFailure;
  if (handler === null || row.tags.includes(`"${ON_FAILURE_TAG}"`)) return;
  // A reader's view (sealing/lens.ts): a sensitive type's values stay redacted in another type's payload; the rest is
  // opened here and sealed again as the new job's payload.
  const view = { job: store.lens.openSync(toJob(row, store.lens), "reader") };
  const payload = JSON.stringify(view);
  const body = {
    type: handler,
    payload: view,
    scope: scopeOfRow(row) ?? undefined,
    id: `onfailure-${hash128Hex(`${row.id}\u0000${row.finished_at}`)}`,
    tags: [ON_FAILURE_TAG],
  };
  let prepared: ReturnType<typeof prepareJob>;
  try {
    prepared = prepareJob(store.config, body, payload, now);
  } catch (e) {
    // The handler type's keyed limits find no key in the failed job's view (docs/guards.md "Keyed limits"): the failure stands.
    if (!(e instanceof QueueError)) throw e;
    console.error(JSON.stringify({ event: "job:onfailure_refused", id: row.id, type: handler, error: e.message }));
    return;
  }
  // Sealed before the outbox keeps it, as the handler's object will (sealing/vault.ts).
  owe(store, "enqueue", prepared.home, JSON.stringify([{ ...prepared.job, payload: store.lens.seal(prepared.job.payload) }]), now);
}
