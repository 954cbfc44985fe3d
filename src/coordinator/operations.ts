/**
 * QueueOps: the queue's operations as the coordinator performs them, by area — jobs one at a time
 * and enqueue, leases, claims, fan-out over homes, the catalog's overview, pools, schedules, topics.
 * Each area routes its calls to the objects that own the jobs and turns rows and refusals into the
 * API's shapes (coordinator/refusals.ts). The declared operations (coordinator/implementations.ts)
 * and the dashboard both run these, after validating their input with the same schemas. No SQL here.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import type { Env } from "../env";
import { BulkActions } from "./bulk-actions";
import { Claims } from "./claims";
import { FanOut } from "./fan-out";
import { Jobs } from "./jobs";
import { Leases } from "./leases";
import { Overview } from "./overview";
import { Pools } from "./pools";
import { QueueContext } from "./queue-context";
import { Schedules } from "./schedules";
import { Signals } from "./signals";
import { Subscriptions } from "./subscriptions";
import { Callbacks } from "./callbacks";
import { Topics } from "./topics";
import { ErrorGroups } from "./errors";
import { Audit } from "./audit";
import { Budgets } from "./budgets";

export class QueueOps {
  readonly jobs: Jobs;
  readonly leases: Leases;
  readonly claims: Claims;
  readonly overview: Overview;
  readonly fanOut: FanOut;
  readonly bulk: BulkActions;
  readonly pools: Pools;
  readonly signals: Signals;
  readonly subscriptions: Subscriptions;
  readonly callbacks: Callbacks;
  readonly errors: ErrorGroups;
  readonly audit: Audit;
  readonly budgets: Budgets;

  constructor(
    private readonly env: Env,
    private readonly config: QueueConfig,
    /** The origin an HTTP request came to (subscription URLs without a publicUrl); null over RPC. */
    origin: string | null = null,
  ) {
    const q = new QueueContext(env, config);
    this.jobs = new Jobs(q);
    this.leases = new Leases(q);
    this.claims = new Claims(q, this.leases);
    this.overview = new Overview(q);
    this.fanOut = new FanOut(q, this.overview);
    this.bulk = new BulkActions(q);
    this.pools = new Pools(q);
    this.signals = new Signals(q);
    this.subscriptions = new Subscriptions(q, origin);
    this.callbacks = new Callbacks(q);
    this.errors = new ErrorGroups(q, this.jobs);
    this.audit = new Audit(q);
    this.budgets = new Budgets(q);
  }

  get schedules(): Schedules {
    return new Schedules(this.env, this.config);
  }

  /** Event topics over the same operations. */
  get topics(): Topics {
    return new Topics(this, this.config);
  }
}
