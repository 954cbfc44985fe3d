/**
 * What each declared operation does (src/api/ declares it; docs/design.md "Operations, declared
 * once"): its input parsed by its own schemas, in, its answer out, over QueueOps. The HTTP routes
 * (coordinator/app.ts) and the RPC entrypoint (coordinator/rpc.ts) both run these, so the two cannot
 * differ; the type below holds the map to every operationId, each with its exact input and answer.
 *
 * @module
 */
import type { Answer, OperationId, ParsedInput } from "../api";
import { renderPrometheus, wantsPrometheus } from "../metrics/prometheus";
import { VERSION } from "../version";
import { servedDocument } from "./openapi";
import type { QueueOps } from "./operations";

export type Implementations = { [K in OperationId]: (ops: QueueOps, input: ParsedInput<K>) => Promise<Answer<K>> };

export const IMPLEMENTATIONS: Implementations = {
  // jobs (api/jobs.ts)
  enqueue: (ops, { body }) => ops.jobs.enqueue(body),
  enqueueBatch: async (ops, { body }) => ({ results: await ops.jobs.enqueueBatch(body.jobs, "jobs", false, body.return ?? "ids") }),
  listJobs: (ops, { query }) => ops.fanOut.list(query),
  getJob: async (ops, { params, query }) => ({ job: await ops.jobs.get(params.id, query) }),
  jobTimeline: (ops, { params, query }) => ops.jobs.timeline(params.id, query.limit),
  listChildren: (ops, { params, query }) => ops.jobs.children(params.id, query.cursor === undefined ? -1 : Number(query.cursor), query.limit),
  cancelJob: async (ops, { params, body }) => ({ job: await ops.jobs.cancel(params.id, body.reason, body.cascade ?? true) }),
  retryJob: async (ops, { params }) => ({ job: await ops.jobs.retry(params.id) }),
  pauseJob: async (ops, { params }) => ({ job: await ops.jobs.pause(params.id) }),
  resumeJob: async (ops, { params }) => ({ job: await ops.jobs.resume(params.id) }),
  rerunJob: async (ops, { params, body }) => ({ job: await ops.jobs.rerun(params.id, body.fromStep, body.payload) }),
  // over many jobs (api/bulk.ts)
  cancelJobs: (ops, { body }) => ops.bulk.run("cancel", body),
  retryJobs: (ops, { body }) => ops.bulk.run("retry", body),
  rerunJobs: (ops, { body }) => ops.bulk.run("rerun", body),
  retryFailed: (ops, { body }) => ops.fanOut.retryFailed(body),
  cancelScope: async (ops, { params, body }) => ({ cancelled: await ops.jobs.cancelScope({ type: params.scopeType, id: params.scopeId }, body.pendingOnly ?? false, body.reason) }),
  cancelKeys: async (ops, { body }) => ({ cancelled: await ops.fanOut.cancelKeys(body) }),
  prune: async (ops, { body }) => ({ deleted: await ops.fanOut.prune(body) }),
  // error groups (api/errors.ts)
  listErrors: (ops, { query }) => ops.errors.list(query.type, query.limit),
  retryErrorGroup: (ops, { body }) => ops.errors.act("retry", body),
  rerunErrorGroup: (ops, { body }) => ops.errors.act("rerun", body),
  // the audit list (api/audit.ts)
  listAudit: (ops, { query }) => ops.audit.page(query),
  // spend caps (api/budgets.ts)
  listBudgets: async (ops) => ({ items: await ops.budgets.list() }),
  liftBudget: async (ops, { params }) => ({ budget: await ops.budgets.lift(params.name) }),
  // leases (api/leases.ts)
  claim: (ops, { body }) => ops.claims.claimAfterCompleting(body),
  heartbeat: async (ops, { params, body }) => ({ leaseExpiresAt: await ops.leases.heartbeat(params.id, body.leaseToken, body.leaseMs) }),
  complete: async (ops, { params, body }) => ({ job: await ops.leases.complete(params.id, body.leaseToken, body.result, body.version) }),
  completeMany: async (ops, { body }) => ({ results: await ops.leases.completeMany(body.items) }),
  release: async (ops, { params, body }) => ({ job: await ops.leases.release(params.id, body.leaseToken) }),
  fail: (ops, { params, body }) => ops.leases.fail(params.id, body),
  claimOrEnqueue: (ops, { body }) => ops.claims.claimOrEnqueue(body),
  claimKey: async (ops, { body }) => ({ leased: await ops.claims.claimKey(body) }),
  // the journal (api/journal.ts)
  jobSteps: async (ops, { params }) => ({ items: await ops.jobs.steps(params.id) }),
  jobLogs: async (ops, { params }) => ({ items: await ops.jobs.logs(params.id) }),
  appendLogs: async (ops, { params, body }) => ({ stored: await ops.leases.appendLogs(params.id, body) }),
  deadCallbacks: async (ops, { query }) => ops.callbacks.dead(query),
  createSubscription: async (ops, { body }) => ops.subscriptions.mint(body, Date.now()),
  createHomeSubscriptions: async (ops, { body }) => ops.subscriptions.mintHomes(body, Date.now()),
  reportProgress: async (ops, { params, body }) => ({ progressAt: await ops.leases.progress(params.id, body) }),
  resolveStep: async (ops, { params, body }) => ({ job: await ops.jobs.resolveStep(params.id, params.name, body.result) }),
  appendStep: async (ops, { params, body }) => ({ ok: true as const, ...(await ops.leases.appendStep(params.id, body)) }),
  sleepJob: async (ops, { params, body }) => ({ job: await ops.leases.sleep(params.id, body) }),
  // signals and wait tokens (api/signals.ts)
  signalJob: (ops, { params, body }) => ops.signals.toJob(params.id, params.name, body.data),
  signalKey: (ops, { body }) => ops.signals.toKey(body),
  completeWaitToken: (ops, { params, body }) => ops.signals.completeToken(params.token, body.data),
  waitJob: async (ops, { params, body }) => ({ job: await ops.leases.wait(params.id, body) }),
  // the queue (api/queue.ts)
  stats: (ops, { query }) => ops.overview.stats(query.type),
  metrics: (ops, { query }) => ops.overview.metrics(query),
  listScopes: async (ops, { query }) => ({ items: await ops.overview.busiestScopes(query.limit) }),
  types: (ops) => ops.overview.types(),
  pauseType: (ops, { params }) => ops.overview.setPaused(params.type, true),
  resumeType: (ops, { params }) => ops.overview.setPaused(params.type, false),
  health: async (ops) => {
    const budgets = await ops.budgets.health(Date.now());
    return { ok: true as const, version: VERSION, ...(budgets ? { budgets } : {}) };
  },
  getOpenApiDocument: async () => servedDocument() as Answer<"getOpenApiDocument">,
  // topics (api/topics.ts)
  emit: (ops, { params, body }) => ops.topics.emit(params.topic, body),
  listDead: (ops, { params, query }) => ops.topics.dead(params.topic, query),
  retryDead: async (ops, { params }) => ({ job: await ops.topics.retryDead(params.topic, params.consumer, params.eventId) }),
  // schedules (api/schedules.ts)
  putSchedule: (ops, { params, body }) => ops.schedules.put(params.name, body),
  listSchedules: async (ops) => ({ items: await ops.schedules.list() }),
  getSchedule: async (ops, { params }) => ({ schedule: await ops.schedules.get(params.name) }),
  deleteSchedule: async (ops, { params }) => {
    await ops.schedules.remove(params.name);
    return { deleted: true as const };
  },
  // pools (api/pools.ts)
  listPools: async (ops) => ({ pools: await ops.pools.list() }),
  listPoolKeys: (ops, { params, query }) => ops.pools.keys(params.name, query.cursor ?? null, query.limit),
  setPoolLimits: (ops, { params, body }) => ops.pools.setLimits(params.name, body),
};

/** The other media type an answer comes in (the declaration's `alsoAs`): when the request's Accept asks for it, and the text. */
export const ALSO_AS: { [K in OperationId]?: { wanted(accept: string | undefined): boolean; render(answer: Answer<K>): string } } = {
  metrics: { wanted: wantsPrometheus, render: renderPrometheus },
};
