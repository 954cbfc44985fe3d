/**
 * Every HTTP path of the API (docs/http-api.md, The HTTP API), as data: method, path,
 * operationId, the zod schemas of its input and output, the errors it can
 * answer, and the operation it runs. The Hono app is built from this table and
 * so is `GET /v1/openapi.json`, so the document cannot drift from what is
 * served.
 *
 * @module
 */
import { z } from "zod";
import type { ErrorCode } from "../errors";
import {
  CancelSchema,
  CancelScopeResultSchema,
  CancelScopeSchema,
  CancelKeysSchema,
  ClaimResultSchema,
  ClaimSchema,
  CompleteSchema,
  CompleteManySchema,
  CompleteManyResultSchema,
  DeadListSchema,
  DeadQuerySchema,
  DeadRetryParams,
  EmitResultSchema,
  EmitSchema,
  EmptyBodySchema,
  EnqueueBatchResultSchema,
  EnqueueBatchSchema,
  EnqueueResultSchema,
  EnqueueSchema,
  FailResultSchema,
  FailSchema,
  HealthSchema,
  HeartbeatResultSchema,
  HeartbeatSchema,
  JobIdParams,
  JobResultSchema,
  ListQuerySchema,
  ListResultSchema,
  PruneResultSchema,
  PoolLimitsSchema,
  PoolListSchema,
  PoolNameParams,
  PoolStatusSchema,
  PruneSchema,
  RetryFailedResultSchema,
  RetryFailedSchema,
  ScopeParams,
  ScopesQuerySchema,
  ScopesResultSchema,
  TimelineQuerySchema,
  TimelineSchema,
  StatsQuerySchema,
  StatsResultSchema,
  ClaimOrEnqueueSchema,
  ClaimOrEnqueueResultSchema,
  ClaimKeySchema,
  ClaimKeyResultSchema,
  ReleaseSchema,
  StepListSchema,
  StepParams,
  ResolveStepSchema,
  AppendStepSchema,
  SleepSchema,
  TopicParams,
  TypeParams,
  JobLogsSchema,
  AppendLogsSchema,
  PauseResultSchema,
  TypeListSchema,
} from "../job/schemas";
import { MetricsQuerySchema, MetricsSchema } from "../metrics/schemas";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus, wantsPrometheus } from "../metrics/prometheus";
import { ScheduleListSchema, ScheduleParams, ScheduleResultSchema, ScheduleSpecSchema } from "../job/schedule-spec";
import { VERSION } from "../version";
import type { QueueOps } from "./operations";

export interface RouteInput<B, Q, P = Record<string, string>> {
  params: P;
  body: B;
  query: Q;
  /** The request's Accept header, for the one route that speaks more than JSON (metrics). */
  accept?: string;
}

/** What an operation answers: a JSON body, or (when `text` is set) that text instead. */
export interface RouteOutput {
  status: 200 | 201 | 202;
  body: unknown;
  text?: { contentType: string; body: string };
}

export interface Route {
  method: "get" | "post" | "put" | "delete";
  /** OpenAPI form: `/v1/jobs/{id}`. */
  path: string;
  /**
   * The OpenAPI operationId: stable (generated clients name their calls by it, so renaming one breaks
   * them), camelCase, and the RPC method's name where the EdgeQueue entrypoint has one (coordinator/rpc.ts).
   */
  operationId: string;
  summary: string;
  params?: z.ZodObject;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** The success statuses and their body schema. */
  responses: Partial<Record<200 | 201 | 202, z.ZodType>>;
  /**
   * The refusals of the operation itself. Those the app answers for every route of a kind are added
   * where the document is built (openapi.ts, `errorCodes`): `unauthorized` when `auth`,
   * `invalid_request` when it takes params, a body or a query, `payload_too_large` when it takes a body.
   */
  errors: readonly ErrorCode[];
  /** Another media type the 200 answer comes in, when the request's Accept asks for it (metrics: Prometheus text). */
  alsoAs?: { contentType: string; description: string };
  auth: boolean;
  handle(ops: QueueOps, input: RouteInput<unknown, unknown>): Promise<RouteOutput>;
}

/** route keeps each handler's input typed by its own schemas. */
function route<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  P extends z.ZodObject | undefined = undefined,
>(def: {
  method: Route["method"];
  path: string;
  operationId: string;
  summary: string;
  params?: P;
  body?: B;
  query?: Q;
  responses: Route["responses"];
  errors: readonly ErrorCode[];
  alsoAs?: Route["alsoAs"];
  auth?: boolean;
  handle(
    ops: QueueOps,
    input: RouteInput<
      B extends z.ZodType ? z.output<B> : undefined,
      Q extends z.ZodObject ? z.output<Q> : undefined,
      P extends z.ZodObject ? z.output<P> : Record<string, string>
    >,
  ): Promise<RouteOutput>;
}): Route {
  return { auth: true, ...def } as Route;
}

const ok = (body: unknown) => ({ status: 200 as const, body });

export const ROUTES: readonly Route[] = [
  route({
    method: "post",
    path: "/v1/jobs",
    operationId: "enqueue",
    summary: "Enqueue a job (idempotent by id, deduplicated by dedupeKey)",
    body: EnqueueSchema,
    responses: { 201: EnqueueResultSchema, 200: EnqueueResultSchema },
    errors: ["conflict", "queue_full"],
    handle: async (ops, { body }) => {
      const r = await ops.enqueue(body);
      return { status: r.created ? 201 : 200, body: r };
    },
  }),
  route({
    method: "post",
    path: "/v1/jobs/batch",
    operationId: "enqueueBatch",
    summary: "Enqueue 1 to 1,000 jobs; one invalid item refuses the whole call",
    body: EnqueueBatchSchema,
    responses: { 200: EnqueueBatchResultSchema },
    errors: ["conflict", "queue_full"],
    handle: async (ops, { body }) => ok({ results: await ops.enqueueBatch(body.jobs) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/complete",
    operationId: "completeMany",
    summary: "Complete 1 to 1,000 leased jobs in one call; each item is answered on its own, as its single complete would be",
    body: CompleteManySchema,
    responses: { 200: CompleteManyResultSchema },
    errors: [],
    handle: async (ops, { body }) => ok({ results: await ops.completeMany(body.items) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/claim-or-enqueue",
    operationId: "claimOrEnqueue",
    summary: "Enqueue under a key (pending mode) and, when no job of the key is running, lease it to the caller in the same transaction",
    body: ClaimOrEnqueueSchema,
    responses: { 200: ClaimOrEnqueueResultSchema },
    errors: ["conflict", "queue_full"],
    handle: async (ops, { body }) => ok(await ops.claimOrEnqueue(body)),
  }),
  route({
    method: "post",
    path: "/v1/jobs/claim-key",
    operationId: "claimKey",
    summary: "Lease a key's pending job once none of the key is running (a caller draining its key's followers)",
    body: ClaimKeySchema,
    responses: { 200: ClaimKeyResultSchema },
    errors: [],
    handle: async (ops, { body }) => ok({ leased: await ops.claimKey(body) }),
  }),
  route({
    method: "get",
    path: "/v1/jobs",
    operationId: "listJobs",
    summary: "List jobs, filtered and paged",
    query: ListQuerySchema,
    responses: { 200: ListResultSchema },
    errors: [],
    handle: async (ops, { query }) => ok(await ops.list(query)),
  }),
  route({
    method: "get",
    path: "/v1/jobs/{id}",
    operationId: "getJob",
    summary: "Get one job",
    params: JobIdParams,
    responses: { 200: JobResultSchema },
    errors: ["not_found"],
    handle: async (ops, { params }) => ok({ job: await ops.get(params.id) }),
  }),
  route({
    method: "get",
    path: "/v1/jobs/{id}/timeline",
    operationId: "jobTimeline",
    summary: "A job's newest transitions, oldest first (state, attempt, time, error or reason)",
    params: JobIdParams,
    query: TimelineQuerySchema,
    responses: { 200: TimelineSchema },
    errors: ["not_found"],
    handle: async (ops, { params, query }) => ok(await ops.timeline(params.id, query.limit)),
  }),
  route({
    method: "get",
    path: "/v1/jobs/{id}/steps",
    operationId: "jobSteps",
    summary: "A job's journal of durable steps and sleeps, in call order",
    params: JobIdParams,
    responses: { 200: StepListSchema },
    errors: ["not_found"],
    handle: async (ops, { params }) => ok({ items: await ops.steps(params.id) }),
  }),
  route({
    method: "get",
    path: "/v1/jobs/{id}/logs",
    operationId: "jobLogs",
    summary: "A job's kept ctx.log lines (the newest 100, each at most 2 KiB), oldest first",
    params: JobIdParams,
    responses: { 200: JobLogsSchema },
    errors: ["not_found"],
    handle: async (ops, { params }) => ok({ items: await ops.logs(params.id) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/logs",
    operationId: "appendLogs",
    summary: "A pull worker keeps its attempt's ctx.log lines with the job, fenced by its lease (edgequeue/worker sends them before it settles)",
    params: JobIdParams,
    body: AppendLogsSchema,
    responses: { 200: z.object({ stored: z.number().int() }) },
    errors: ["not_found", "lease_lost", "already_terminal"],
    handle: async (ops, { params, body }) => ok({ stored: await ops.appendLogs(params.id, body) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/steps/{name}/resolve",
    operationId: "resolveStep",
    summary: "Journal what an unfinished atMostOnce step did; a failed or cancelled job goes back to pending",
    params: StepParams,
    body: ResolveStepSchema,
    responses: { 200: JobResultSchema },
    errors: ["not_found", "conflict", "already_terminal"],
    handle: async (ops, { params, body }) => ok({ job: await ops.resolveStep(params.id, params.name, body.result) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/steps",
    operationId: "appendStep",
    summary: "A pull worker journals a durable step (begin an atMostOnce step, or commit a result), fenced by its lease",
    params: JobIdParams,
    body: AppendStepSchema,
    responses: { 200: z.object({ ok: z.literal(true) }) },
    errors: ["not_found", "lease_lost", "already_terminal", "conflict"],
    handle: async (ops, { params, body }) => {
      await ops.appendStep(params.id, body);
      return ok({ ok: true as const });
    },
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/sleep",
    operationId: "sleepJob",
    summary: "A pull worker's durable sleep: journal it and put the job back to pending until `until`, without spending the attempt",
    params: JobIdParams,
    body: SleepSchema,
    responses: { 200: JobResultSchema },
    errors: ["not_found", "lease_lost", "already_terminal", "conflict"],
    handle: async (ops, { params, body }) => ok({ job: await ops.sleep(params.id, body) }),
  }),
  route({
    method: "get",
    path: "/v1/metrics",
    operationId: "metrics",
    summary: "Per-type counts, lag, totals and per-minute counters; Prometheus text with `Accept: text/plain`",
    query: MetricsQuerySchema,
    responses: { 200: MetricsSchema },
    alsoAs: { contentType: PROMETHEUS_CONTENT_TYPE, description: "Prometheus text exposition format 0.0.4: counters (`edgequeue_jobs_<counter>_total`), per-state gauges, failed by kind, oldest pending lag." },
    errors: [],
    handle: async (ops, { query, accept }) => {
      const m = await ops.metrics(query);
      return wantsPrometheus(accept) ? { status: 200, body: m, text: { contentType: PROMETHEUS_CONTENT_TYPE, body: renderPrometheus(m) } } : ok(m);
    },
  }),
  route({
    method: "get",
    path: "/v1/scopes",
    operationId: "listScopes",
    summary: "The busiest objects (scopes and unscoped type shards) by live jobs, most first",
    query: ScopesQuerySchema,
    responses: { 200: ScopesResultSchema },
    errors: [],
    handle: async (ops, { query }) => ok({ items: await ops.busiestScopes(query.limit) }),
  }),
  route({
    method: "get",
    path: "/v1/stats",
    operationId: "stats",
    summary: "Counts by state, the oldest pending lag, and the types nothing will run, across all objects",
    query: StatsQuerySchema,
    responses: { 200: StatsResultSchema },
    errors: [],
    handle: async (ops, { query }) => ok(await ops.stats(query.type)),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/cancel",
    operationId: "cancelJob",
    summary: "Cancel a pending or running job (a running job's lease is revoked)",
    params: JobIdParams,
    body: CancelSchema,
    responses: { 200: JobResultSchema },
    errors: ["not_found", "already_terminal"],
    handle: async (ops, { params, body }) => ok({ job: await ops.cancel(params.id, body.reason) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/retry",
    operationId: "retryJob",
    summary: "Send a failed or cancelled job back to pending, due now, attempts 0",
    params: JobIdParams,
    body: EmptyBodySchema,
    responses: { 200: JobResultSchema },
    errors: ["not_found", "conflict"],
    handle: async (ops, { params }) => ok({ job: await ops.retry(params.id) }),
  }),
  route({
    method: "post",
    path: "/v1/retry",
    operationId: "retryFailed",
    summary: "Send every failed job (of a type, a scope, or both) back to pending, due now, attempts 0",
    body: RetryFailedSchema,
    responses: { 200: RetryFailedResultSchema },
    errors: ["not_found"],
    handle: async (ops, { body }) => ok(await ops.retryFailed(body)),
  }),
  route({
    method: "post",
    path: "/v1/scopes/{scopeType}/{scopeId}/cancel",
    operationId: "cancelScope",
    summary: "Cancel every pending (and, unless pendingOnly, running) job of a scope",
    params: ScopeParams,
    body: CancelScopeSchema,
    responses: { 200: CancelScopeResultSchema },
    errors: [],
    handle: async (ops, { params, body }) =>
      ok({ cancelled: await ops.cancelScope({ type: params.scopeType, id: params.scopeId }, body.pendingOnly ?? false, body.reason) }),
  }),
  route({
    method: "post",
    path: "/v1/cancel",
    operationId: "cancelKeys",
    summary: "Cancel the live jobs of a type under these dedupe keys (in a scope, or among the type's unscoped jobs); running ones are aborted with the reason",
    body: CancelKeysSchema,
    responses: { 200: CancelScopeResultSchema },
    errors: [],
    handle: async (ops, { body }) => ok({ cancelled: await ops.cancelKeys(body) }),
  }),
  route({
    method: "get",
    path: "/v1/types",
    operationId: "types",
    summary: "Every configured type and any other the queue has seen, with whether it is paused or pushed and its counts",
    responses: { 200: TypeListSchema },
    errors: [],
    handle: async (ops) => ok(await ops.types()),
  }),
  route({
    method: "post",
    path: "/v1/types/{type}/pause",
    operationId: "pauseType",
    summary: "Pause a type queue-wide: enqueues still land, nothing of it is dispatched or claimed, running jobs finish; survives restarts",
    params: TypeParams,
    body: EmptyBodySchema,
    responses: { 200: PauseResultSchema },
    errors: ["not_found"],
    handle: async (ops, { params }) => ok(await ops.setPaused(params.type, true)),
  }),
  route({
    method: "post",
    path: "/v1/types/{type}/resume",
    operationId: "resumeType",
    summary: "Resume a paused type: its due jobs are dispatched and claimed again",
    params: TypeParams,
    body: EmptyBodySchema,
    responses: { 200: PauseResultSchema },
    errors: ["not_found"],
    handle: async (ops, { params }) => ok(await ops.setPaused(params.type, false)),
  }),
  route({
    method: "post",
    path: "/v1/prune",
    operationId: "prune",
    summary: "Delete terminal jobs that finished before olderThan",
    body: PruneSchema,
    responses: { 200: PruneResultSchema },
    errors: [],
    handle: async (ops, { body }) => ok({ deleted: await ops.prune(body) }),
  }),
  route({
    method: "post",
    path: "/v1/claim",
    operationId: "claim",
    summary: "Lease due jobs for a pull worker, serving scopes fairly; `complete` first completes jobs the worker finished",
    body: ClaimSchema,
    responses: { 200: ClaimResultSchema },
    errors: [],
    handle: async (ops, { body }) => ok(await ops.claimAfterCompleting(body)),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/heartbeat",
    operationId: "heartbeat",
    summary: "Extend a lease",
    params: JobIdParams,
    body: HeartbeatSchema,
    responses: { 200: HeartbeatResultSchema },
    errors: ["not_found", "lease_lost", "already_terminal"],
    handle: async (ops, { params, body }) => ok({ leaseExpiresAt: await ops.heartbeat(params.id, body.leaseToken, body.leaseMs) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/complete",
    operationId: "complete",
    summary: "Complete a leased job with an optional result",
    params: JobIdParams,
    body: CompleteSchema,
    responses: { 200: JobResultSchema },
    errors: ["not_found", "lease_lost", "already_terminal"],
    handle: async (ops, { params, body }) => ok({ job: await ops.complete(params.id, body.leaseToken, body.result) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/release",
    operationId: "release",
    summary: "Give a leased job back unrun: pending, due now, its attempt not counted (a pending follower of its key supersedes it)",
    params: JobIdParams,
    body: ReleaseSchema,
    responses: { 200: JobResultSchema },
    errors: ["not_found", "lease_lost", "already_terminal"],
    handle: async (ops, { params, body }) => ok({ job: await ops.release(params.id, body.leaseToken) }),
  }),
  route({
    method: "post",
    path: "/v1/jobs/{id}/fail",
    operationId: "fail",
    summary: "Fail an attempt: retry with backoff, or fail for good (fatal, or the last attempt)",
    params: JobIdParams,
    body: FailSchema,
    responses: { 200: FailResultSchema },
    errors: ["not_found", "lease_lost", "already_terminal"],
    handle: async (ops, { params, body }) => ok(await ops.fail(params.id, body)),
  }),
  route({
    method: "post",
    path: "/v1/topics/{topic}/events",
    operationId: "emit",
    summary: "Emit an event: one delivery job per consumer of the topic (idempotent by event id)",
    params: TopicParams,
    body: EmitSchema,
    responses: { 202: EmitResultSchema },
    errors: ["not_found", "queue_full"],
    handle: async (ops, { params, body }) => ({ status: 202, body: await ops.topics.emit(params.topic, body) }),
  }),
  route({
    method: "get",
    path: "/v1/topics/{topic}/dead",
    operationId: "listDead",
    summary: "Deliveries quarantined after maxAttempts failures",
    params: TopicParams,
    query: DeadQuerySchema,
    responses: { 200: DeadListSchema },
    errors: ["not_found"],
    handle: async (ops, { params, query }) => ok(await ops.topics.dead(params.topic, query)),
  }),
  route({
    method: "post",
    path: "/v1/topics/{topic}/dead/{consumer}/{eventId}/retry",
    operationId: "retryDead",
    summary: "Hand a quarantined delivery back: due now, attempts 0",
    params: DeadRetryParams,
    body: EmptyBodySchema,
    responses: { 200: JobResultSchema },
    errors: ["not_found", "conflict"],
    handle: async (ops, { params }) => ok({ job: await ops.topics.retryDead(params.topic, params.consumer, params.eventId) }),
  }),
  route({
    method: "put",
    path: "/v1/schedules/{name}",
    operationId: "putSchedule",
    summary: "Create or replace a schedule (cron, everyMs or at)",
    params: ScheduleParams,
    body: ScheduleSpecSchema,
    responses: { 201: ScheduleResultSchema, 200: ScheduleResultSchema },
    errors: ["conflict"],
    handle: async (ops, { params, body }) => {
      const r = await ops.schedules.put(params.name, body);
      return { status: r.created ? 201 : 200, body: { schedule: r.schedule } };
    },
  }),
  route({
    method: "get",
    path: "/v1/schedules",
    operationId: "listSchedules",
    summary: "Every schedule, with its next run and last fire",
    responses: { 200: ScheduleListSchema },
    errors: [],
    handle: async (ops) => ok({ items: await ops.schedules.list() }),
  }),
  route({
    method: "get",
    path: "/v1/schedules/{name}",
    operationId: "getSchedule",
    summary: "One schedule",
    params: ScheduleParams,
    responses: { 200: ScheduleResultSchema },
    errors: ["not_found"],
    handle: async (ops, { params }) => ok({ schedule: await ops.schedules.get(params.name) }),
  }),
  route({
    method: "delete",
    path: "/v1/schedules/{name}",
    operationId: "deleteSchedule",
    summary: "Delete a schedule (jobs it already fired stay)",
    params: ScheduleParams,
    responses: { 200: z.object({ deleted: z.literal(true) }) },
    errors: ["not_found", "conflict"],
    handle: async (ops, { params }) => {
      await ops.schedules.remove(params.name);
      return ok({ deleted: true });
    },
  }),
  route({
    method: "get",
    path: "/v1/pools",
    operationId: "listPools",
    summary: "Every pool: limits in force, occupancy, spend in the current window, who is waiting",
    responses: { 200: PoolListSchema },
    errors: [],
    handle: async (ops) => ok({ pools: await ops.listPools() }),
  }),
  route({
    method: "put",
    path: "/v1/pools/{name}",
    operationId: "setPoolLimits",
    summary: "Resize a pool at runtime (persisted; the config stays the default)",
    params: PoolNameParams,
    body: PoolLimitsSchema,
    responses: { 200: PoolStatusSchema },
    errors: ["not_found"],
    handle: async (ops, { params, body }) => ok(await ops.setPoolLimits(params.name, body)),
  }),
  route({
    method: "get",
    path: "/v1/health",
    operationId: "health",
    summary: "Liveness (no auth)",
    responses: { 200: HealthSchema },
    errors: [],
    auth: false,
    handle: async () => ok({ ok: true, version: VERSION }),
  }),
];
