/**
 * The workflow capability (capability.ts): durable steps and sleeps, waits
 * for signals, tokens, events and child jobs, failure handlers, and the
 * outbox that carries what one object owes another (docs/workflows.md,
 * docs/design.md "The outbox"). Inside the core's writes it ends what a
 * cancelled or failed job left open and asks again for what a retried one
 * waits on (its hooks); after a commit it sends what the write owed; its
 * alarm share ends the waits whose timeout passed and sends what is still
 * owed.
 *
 * @module
 */
import type { AlarmPass, Capability, WakeRow } from "../jobs/capability";
import type { Changes } from "../jobs/changes";
import type { JobHooks } from "../jobs/job-hooks";
import { earliest } from "../jobs/capability";
import { registerAgain } from "./event-waits";
import { owedOnFailure } from "./failure-handlers";
import { abandonWaits } from "./invokes";
import { OutboxSender, type OwedItem } from "./outbox";
import { forgetUnfinished } from "./steps";
import { WAIT_FOREVER } from "./wait-entries";
import { workflowWrites } from "./workflow-writes";
import type { WorkflowStore } from "./workflow-store";

export interface WorkflowDeps {
  store: WorkflowStore;
  now(): number;
  keepAlive(p: Promise<unknown>): void;
  rearm(): Promise<void>;
  /** Deliver owed items to the object named `home` (this one's own are applied here, not sent round). */
  deliver(home: string, items: OwedItem[]): Promise<boolean[]>;
}

export class Workflow implements Capability {
  readonly name = "workflow";
  /** Sends what this object owes others, after the commit and again from the alarm (outbox.ts). */
  readonly outbox: OutboxSender;
  readonly hooks: Partial<JobHooks> = {
    ended: (store, rows, now, cascade) => abandonWaits(store, rows, now, cascade),
    failed: (store, row, now) => owedOnFailure(store, row, now),
    retrying: (store, row) => forgetUnfinished(store, row.seq),
    retried: (store, row, now) => registerAgain(store, row, now),
  };
  readonly wakeColumns = {
    // A wait with no timeout is due at the end of time, which no alarm can be set for.
    waiting: `(SELECT min(run_at) FROM job WHERE state = 'waiting' AND run_at < ${WAIT_FOREVER})`,
    owed: "(SELECT min(next_at) FROM outbox)",
  };

  constructor(private readonly d: WorkflowDeps) {
    this.outbox = new OutboxSender({ sql: d.store.sql, now: d.now, deliver: d.deliver, keepAlive: d.keepAlive, rearm: d.rearm });
  }

  /** What the write owed is sent: the store marked an `owe`; a child's row ending says it by itself (job_child_end). */
  follow(c: Changes): void {
    if (c.gathered.owed || c.events.some((r) => r.finished_at !== null && r.parent_id !== null)) this.outbox.kick();
  }

  nextWake(row: WakeRow): number | null {
    return earliest([row.waiting, row.owed]);
  }

  /** Waits whose timeout passed end (null) and their jobs are due again (waits.ts); then what is still owed is sent. */
  async alarm(pass: AlarmPass): Promise<boolean> {
    const { more } = await pass.commit(workflowWrites.waitTimeouts(this.d.store, pass.now));
    // Owed items whose first send did not land (a crash, an unreachable receiver), and those this pass owed.
    await this.outbox.flushDue();
    return more;
  }
}
