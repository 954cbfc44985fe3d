/**
 * Applying what other objects owed this one (outbox.ts; docs/design.md "The outbox"): each kind of owed item is
 * one write (workflow-writes.ts, jobs/job-writes.ts) through the one commit path, idempotent, so a send that came twice changes nothing. A
 * delivery's children's ends, however many, are one transaction (each parent's journal read once: invokes.ts).
 * Answers, per item, whether it was applied (false: this home is full for now; the item is sent again).
 *
 * @module
 */
import type { Written } from "../jobs/changes";
import type { ArrivedEvent, EventWait } from "./event-waits";
import type { WorkflowStore } from "./workflow-store";
import type { ChildEnd, OwedJob } from "./invokes";
import type { OwedItem } from "./outbox";
import { jobWrites } from "../jobs/job-writes";
import { workflowWrites } from "./workflow-writes";

/** write: one write through the object's commit path (scope-parts.ts). */
type Write = <A>(op: (now: number) => Written<A>) => Promise<A>;

export async function applyOwed(store: WorkflowStore, home: string, items: readonly OwedItem[], write: Write): Promise<boolean[]> {
  const ends = items.flatMap((item) => (item.kind === "child_ended" ? [{ parentId: item.target, end: JSON.parse(item.body) as ChildEnd }] : []));
  if (ends.length > 0) await write((at) => workflowWrites.childrenEnded(store, ends, at));
  const out: boolean[] = [];
  for (const item of items) {
    if (item.kind === "child_ended") {
      out.push(true);
      continue;
    }
    const body = JSON.parse(item.body) as unknown;
    switch (item.kind) {
      case "enqueue":
        out.push(!(await write((at) => workflowWrites.enqueueOwed(store, body as OwedJob[], at, home))).retry);
        break;
      case "cancel":
        // A child already ended, or gone, needs no cancel: either way it is done with.
        await write((at) => jobWrites.cancel(store, item.target, (body as { reason: string }).reason, at));
        out.push(true);
        break;
      case "event_wait":
        out.push(await write((at) => workflowWrites.eventWait(store, body as EventWait, at)));
        break;
      case "event_unwait": {
        const { jobId, seq } = body as { jobId: string; seq: number };
        out.push(await write(() => workflowWrites.eventUnwait(store, jobId, seq)));
        break;
      }
      case "event_arrived": {
        const { seq, event } = body as { seq: number; event: ArrivedEvent };
        out.push(await write((at) => workflowWrites.eventArrived(store, item.target, seq, event, at)));
        break;
      }
    }
  }
  return out;
}
