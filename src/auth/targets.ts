/**
 * What a call touches, for a token limited to job types or scope types (docs/operating.md "Tokens and roles"):
 * the types and scope types its input names, the job it names (whose type is read before the call), or — for a
 * call under a lease — the lease itself, granted to a claim the same check passed. A call whose reach the input
 * cannot bound (every type's metrics, a pool, a topic's consumers) is `unbounded`: a limited token may not make it.
 *
 * @module
 */
import type { OperationId } from "../api";

type Scope = { type: string } | undefined;
type Input = { params?: any; body?: any; query?: any };

export type Target =
  /** The job types it touches, and the scope types (null: an unscoped job); undefined: not named (unbounded for a token limited to them). */
  | { kind: "named"; types?: readonly string[]; scopeTypes?: readonly (string | null)[] }
  /** One job by id: its type and scope are read first. */
  | { kind: "job"; id: string }
  /** Under a lease: a claim the check passed holds it. */
  | { kind: "leased" }
  /** Touches nothing a type limits (the API's description). */
  | { kind: "free" }
  | { kind: "unbounded"; why: string };

const named = (types: readonly string[] | undefined, scopeTypes?: readonly (string | null)[]): Target => ({ kind: "named", ...(types ? { types } : {}), ...(scopeTypes ? { scopeTypes } : {}) });
const scoped = (scope: Scope): (string | null)[] => [scope?.type ?? null];
const job = (i: Input): Target => ({ kind: "job", id: i.params.id as string });
const leased = (): Target => ({ kind: "leased" });
const unbounded = (why: string) => (): Target => ({ kind: "unbounded", why });
/** A filter's types and scope type (a bulk action's, a listing's). */
const filtered = (f: { type?: string[]; scopeType?: string } | undefined): Target => named(f?.type, f?.scopeType !== undefined ? [f.scopeType] : undefined);

/** Each operation's reach, from its parsed input. */
export const TARGETS: Record<Exclude<OperationId, "health" | "completeWaitToken">, (input: Input) => Target> = {
  enqueue: (i) => named([i.body.type], scoped(i.body.scope)),
  enqueueBatch: (i) => named(i.body.jobs.map((j: { type: string }) => j.type), i.body.jobs.map((j: { scope?: Scope }) => j.scope?.type ?? null)),
  claimOrEnqueue: (i) => named([i.body.job.type], scoped(i.body.job.scope)),
  emit: unbounded("an event goes to its topic's consumer types, whichever they are"),
  signalJob: job,
  signalKey: (i) => named([i.body.type], scoped(i.body.scope)),
  getJob: job,
  jobTimeline: job,
  listChildren: job,
  jobSteps: job,
  jobLogs: job,
  cancelJob: job,
  retryJob: job,
  pauseJob: job,
  resumeJob: job,
  rerunJob: job,
  resolveStep: job,
  listJobs: (i) => filtered({ type: i.query.type, scopeType: i.query.scopeType }),
  stats: (i) => named(i.query.type ? [i.query.type] : undefined),
  listErrors: (i) => named(i.query.type ? [i.query.type] : undefined),
  retryErrorGroup: (i) => named([i.body.type]),
  rerunErrorGroup: (i) => named([i.body.type]),
  cancelJobs: (i) => filtered(i.body.filter),
  retryJobs: (i) => filtered(i.body.filter),
  rerunJobs: (i) => filtered(i.body.filter),
  retryFailed: (i) => named(i.body.type ? [i.body.type] : undefined, i.body.scopeType !== undefined ? [i.body.scopeType] : undefined),
  cancelScope: (i) => named(undefined, [i.params.scopeType]),
  cancelKeys: (i) => named([i.body.type], scoped(i.body.scope)),
  pauseType: (i) => named([i.params.type]),
  resumeType: (i) => named([i.params.type]),
  createSubscription: (i) => (i.body.jobId !== undefined ? { kind: "job", id: i.body.jobId } : named(i.body.type ? [i.body.type] : undefined, i.body.scope ? [i.body.scope.type] : undefined)),
  claim: (i) => named(i.body.types),
  claimKey: (i) => named([i.body.type], scoped(i.body.scope)),
  heartbeat: leased,
  complete: leased,
  completeMany: leased,
  release: leased,
  fail: leased,
  appendLogs: leased,
  reportProgress: leased,
  appendStep: leased,
  sleepJob: leased,
  // Under the lease, but a child it invokes is a new job of its own type and scope (a limited worker's invoke is checked).
  waitJob: (i) => {
    const requests = (i.body.waits as { kind: string; request?: { type?: string; scope?: Scope } }[]).filter((w) => w.kind === "invoke");
    if (requests.length === 0) return leased();
    return named(requests.map((w) => String(w.request?.type ?? "")), requests.map((w) => w.request?.scope?.type ?? null));
  },
  getOpenApiDocument: () => ({ kind: "free" }),
  metrics: unbounded("the metrics cover every type"),
  listScopes: unbounded("scopes hold jobs of any type"),
  types: unbounded("it lists every type"),
  createHomeSubscriptions: unbounded("a type's objects hold other types' jobs too"),
  listPools: unbounded("pools are shared across types"),
  listPoolKeys: unbounded("pools are shared across types"),
  setPoolLimits: unbounded("pools are shared across types"),
  listSchedules: unbounded("schedules are not limited to types"),
  getSchedule: unbounded("schedules are not limited to types"),
  putSchedule: unbounded("schedules are not limited to types"),
  deleteSchedule: unbounded("schedules are not limited to types"),
  listDead: unbounded("an event's consumers are any types"),
  retryDead: unbounded("an event's consumers are any types"),
  deadCallbacks: unbounded("callbacks of every type"),
  prune: unbounded("it prunes every type"),
  listAudit: unbounded("the audit list covers every type"),
  listBudgets: unbounded("budgets are the queue's"),
  liftBudget: unbounded("budgets are the queue's"),
};
