/**
 * createHttpClient: the typed client over the HTTP API, for Node, browsers
 * and anything outside Cloudflare. Beside the producer's calls it has the
 * operator's (pause, timeline, logs, steps, cancel by keys, schedules, pools,
 * topics…), and `request(operationId, input)` reaches every operation of the
 * API by its OpenAPI operationId (client/operations.ts) — the CLI is built on it.
 *
 * @example
 * const queue = createHttpClient("https://edgequeue.example.workers.dev", process.env.QUEUE_TOKEN!);
 * await queue.enqueue({ type: "email.send", payload: { to: "a@b.c" } });
 * await queue.pauseType("email.send");
 *
 * @module
 */
import { QueueClientError } from "./errors";
import type { QueueClient } from "./rpc-client";
import type { DeadDelivery, Job, JobLogs, LeasedJob, PauseResult, PoolStatusBody, StepView, Timeline, TypeList, Scope, Stats } from "../job/schemas";
import type { JsonObject } from "../job/json-safe";
import type { Schedule, ScheduleSpec } from "../job/schedule-spec";
import { runClaimed, type LeaseOps } from "./run-claimed";
import { OPERATIONS, operationUrl, type OperationId, type OperationInput } from "./operations";

export interface HttpClientOptions {
  /** A fetch to use instead of the global one (tests, proxies, service bindings). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** The operator's calls, named by their operationId where the producer's QueueClient has no name for them. */
export interface QueueOperatorClient {
  /** request: any operation of the API by its operationId, answered with its JSON body (refusals thrown as QueueClientError). */
  request<T = unknown>(operationId: OperationId, input?: OperationInput): Promise<T>;
  health(): Promise<{ ok: true; version: string }>;
  types(): Promise<TypeList>;
  pauseType(type: string): Promise<PauseResult>;
  resumeType(type: string): Promise<PauseResult>;
  jobTimeline(id: string, query?: { limit?: number }): Promise<Timeline>;
  jobSteps(id: string): Promise<{ items: StepView[] }>;
  jobLogs(id: string): Promise<JobLogs>;
  /** resolveStep: say what an at-most-once step did (its JSON result; null is a result), so the job goes on past it. */
  resolveStep(id: string, name: string, result: unknown): Promise<Job>;
  retryJob(id: string): Promise<Job>;
  cancelScope(scope: Scope, options?: { pendingOnly?: boolean; reason?: string }): Promise<{ cancelled: number }>;
  cancelKeys(input: { type: string; dedupeKeys: string[]; scope?: Scope; reason?: string }): Promise<{ cancelled: number }>;
  listScopes(query?: { limit?: number }): Promise<{ items: (Stats & { scope: Scope })[] }>;
  prune(input: { olderThan: number; states?: ("completed" | "failed" | "cancelled")[] }): Promise<{ deleted: number }>;
  emit(topic: string, input: { payload: JsonObject; id?: string }): Promise<{ eventId: string; deliveries: string[] }>;
  listDead(topic: string, query?: { consumer?: string; limit?: number; cursor?: string }): Promise<{ items: DeadDelivery[]; nextCursor: string | null }>;
  retryDead(topic: string, consumer: string, eventId: string): Promise<Job>;
  listSchedules(): Promise<{ items: Schedule[] }>;
  getSchedule(name: string): Promise<Schedule>;
  putSchedule(name: string, spec: ScheduleSpec): Promise<{ created: boolean; schedule: Schedule }>;
  deleteSchedule(name: string): Promise<{ deleted: true }>;
  listPools(): Promise<{ pools: PoolStatusBody[] }>;
  setPoolLimits(name: string, limits: { concurrency?: number | null; ratePerMinute?: number | null }): Promise<PoolStatusBody>;
}

export type HttpQueueClient = QueueClient & QueueOperatorClient;

export function createHttpClient(baseUrl: string, token: string, options: HttpClientOptions = {}): HttpQueueClient {
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const root = baseUrl.replace(/\/+$/, "");

  /** answer: the JSON body and status, or the refusal thrown with its code, field details and status. */
  async function send(op: OperationId, input: OperationInput = {}): Promise<{ status: number; body: unknown }> {
    const [method] = OPERATIONS[op];
    const res = await doFetch(`${root}${operationUrl(op, input)}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(input.body === undefined ? {} : { "content-type": "application/json" }) },
      // JSON.stringify drops undefined properties, as the RPC client does (client/json-input.ts).
      body: input.body === undefined ? undefined : JSON.stringify(input.body),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new QueueClientError("internal", `the queue answered ${res.status} with a body that is not JSON`, undefined, res.status);
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code: string; message: string; details?: unknown } })?.error;
      throw new QueueClientError(e?.code ?? "internal", e?.message ?? `HTTP ${res.status}`, e?.details, res.status);
    }
    return { status: res.status, body: parsed };
  }
  const request = async <T>(op: OperationId, input?: OperationInput): Promise<T> => (await send(op, input)).body as T;
  const jobOf = async (op: OperationId, input: OperationInput) => (await request<{ job: Job }>(op, input)).job;

  const leaseOps: LeaseOps = {
    heartbeat: (id, leaseToken) => request("heartbeat", { params: { id }, body: { leaseToken } }),
    complete: (id, leaseToken, result) => request("complete", { params: { id }, body: { leaseToken, ...(result ? { result } : {}) } }),
    fail: (id, leaseToken, error) => request("fail", { params: { id }, body: { leaseToken, error: error.slice(0, 4000) || "error" } }),
    claimKey: async (body) => (await request<{ leased: LeasedJob | null }>("claimKey", { body })).leased,
  };

  return {
    request,
    enqueue: (body) => request("enqueue", { body }),
    enqueueMany: async (jobs) => (await request<{ results: never[] }>("enqueueBatch", { body: { jobs } })).results,
    get: (id) => jobOf("getJob", { params: { id } }) as never,
    cancel: (id, reason) => jobOf("cancelJob", { params: { id }, body: reason === undefined ? {} : { reason } }) as never,
    list: (query = {}) => request("listJobs", { query: { ...query } }),
    stats: (type) => request("stats", { query: { type } }),
    metrics: (query = {}) => request("metrics", { query: { ...query } }),
    retryFailed: (filter = {}) => request("retryFailed", { body: filter }),
    claimOrEnqueue: async (job, o = {}) =>
      (await request<{ leased: LeasedJob | null }>("claimOrEnqueue", { body: { job, worker: o.worker ?? "inline", ...(o.leaseMs ? { leaseMs: o.leaseMs } : {}) } })).leased,
    runClaimed: (handle, fn, o) => runClaimed(leaseOps, handle, fn, o),

    health: () => request("health"),
    types: () => request("types"),
    pauseType: (type) => request("pauseType", { params: { type }, body: {} }),
    resumeType: (type) => request("resumeType", { params: { type }, body: {} }),
    jobTimeline: (id, query = {}) => request("jobTimeline", { params: { id }, query }),
    jobSteps: (id) => request("jobSteps", { params: { id } }),
    jobLogs: (id) => request("jobLogs", { params: { id } }),
    resolveStep: (id, name, result) => jobOf("resolveStep", { params: { id, name }, body: { result } }),
    retryJob: (id) => jobOf("retryJob", { params: { id }, body: {} }),
    cancelScope: (scope, o = {}) => request("cancelScope", { params: { scopeType: scope.type, scopeId: scope.id }, body: o }),
    cancelKeys: (body) => request("cancelKeys", { body }),
    listScopes: (query = {}) => request("listScopes", { query }),
    prune: (body) => request("prune", { body }),
    emit: (topic, body) => request("emit", { params: { topic }, body }),
    listDead: (topic, query = {}) => request("listDead", { params: { topic }, query }),
    retryDead: (topic, consumer, eventId) => jobOf("retryDead", { params: { topic, consumer, eventId }, body: {} }),
    listSchedules: () => request("listSchedules"),
    getSchedule: async (name) => (await request<{ schedule: Schedule }>("getSchedule", { params: { name } })).schedule,
    putSchedule: async (name, spec) => {
      const r = await send("putSchedule", { params: { name }, body: spec });
      return { created: r.status === 201, schedule: (r.body as { schedule: Schedule }).schedule };
    },
    deleteSchedule: (name) => request("deleteSchedule", { params: { name } }),
    listPools: () => request("listPools"),
    setPoolLimits: (name, body) => request("setPoolLimits", { params: { name }, body }),
  };
}
