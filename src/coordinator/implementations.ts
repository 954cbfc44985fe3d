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
  enqueue: (ops, { body }) => ops.enqueue(body),
  enqueueBatch: async (ops, { body }) => ({ results: await ops.enqueueBatch(body.jobs) }),
  listJobs: (ops, { query }) => ops.list(query),
  getJob: async (ops, { params }) => ({ job: await ops.get(params.id) }),
  jobTimeline: (ops, { params, query }) => ops.timeline(params.id, query.limit),
  cancelJob: async (ops, { params, body }) => ({ job: await ops.cancel(params.id, body.reason) }),
  retryJob: async (ops, { params }) => ({ job: await ops.retry(params.id) }),
  // over many jobs (api/bulk.ts)
  retryFailed: (ops, { body }) => ops.retryFailed(body),
  cancelScope: async (ops, { params, body }) => ({ cancelled: await ops.cancelScope({ type: params.scopeType, id: params.scopeId }, body.pendingOnly ?? false, body.reason) }),
  cancelKeys: async (ops, { body }) => ({ cancelled: await ops.cancelKeys(body) }),
  prune: async (ops, { body }) => ({ deleted: await ops.prune(body) }),
  // leases (api/leases.ts)
  claim: (ops, { body }) => ops.claimAfterCompleting(body),
  heartbeat: async (ops, { params, body }) => ({ leaseExpiresAt: await ops.heartbeat(params.id, body.leaseToken, body.leaseMs) }),
  complete: async (ops, { params, body }) => ({ job: await ops.complete(params.id, body.leaseToken, body.result) }),
  completeMany: async (ops, { body }) => ({ results: await ops.completeMany(body.items) }),
  release: async (ops, { params, body }) => ({ job: await ops.release(params.id, body.leaseToken) }),
  fail: (ops, { params, body }) => ops.fail(params.id, body),
  claimOrEnqueue: (ops, { body }) => ops.claimOrEnqueue(body),
  claimKey: async (ops, { body }) => ({ leased: await ops.claimKey(body) }),
  // the journal (api/journal.ts)
  jobSteps: async (ops, { params }) => ({ items: await ops.steps(params.id) }),
  jobLogs: async (ops, { params }) => ({ items: await ops.logs(params.id) }),
  appendLogs: async (ops, { params, body }) => ({ stored: await ops.appendLogs(params.id, body) }),
  resolveStep: async (ops, { params, body }) => ({ job: await ops.resolveStep(params.id, params.name, body.result) }),
  appendStep: async (ops, { params, body }) => {
    await ops.appendStep(params.id, body);
    return { ok: true as const };
  },
  sleepJob: async (ops, { params, body }) => ({ job: await ops.sleep(params.id, body) }),
  // the queue (api/queue.ts)
  stats: (ops, { query }) => ops.stats(query.type),
  metrics: (ops, { query }) => ops.metrics(query),
  listScopes: async (ops, { query }) => ({ items: await ops.busiestScopes(query.limit) }),
  types: (ops) => ops.types(),
  pauseType: (ops, { params }) => ops.setPaused(params.type, true),
  resumeType: (ops, { params }) => ops.setPaused(params.type, false),
  health: async () => ({ ok: true as const, version: VERSION }),
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
  listPools: async (ops) => ({ pools: await ops.listPools() }),
  setPoolLimits: (ops, { params, body }) => ops.setPoolLimits(params.name, body),
};

/** The other media type an answer comes in (the declaration's `alsoAs`): when the request's Accept asks for it, and the text. */
export const ALSO_AS: { [K in OperationId]?: { wanted(accept: string | undefined): boolean; render(answer: Answer<K>): string } } = {
  metrics: { wanted: wantsPrometheus, render: renderPrometheus },
};
