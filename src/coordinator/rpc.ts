/**
 * EdgeQueue: the same operations as the HTTP API, for Workers that bind to
 * the queue with a service binding (`entrypoint = "EdgeQueue"`). Inputs are
 * validated with the same schemas. Error classes do not survive RPC, so every
 * method returns the HTTP body shape tagged with `ok`: `{ ok: true, ...body }`
 * or `{ ok: false, error: { code, message, details? } }`.
 *
 * @example
 * const r = await env.QUEUE.enqueue({ type: "email.send", payload: { to: "a@b.c" } });
 * if (r.ok) console.log(r.job.id, r.created);
 *
 * @module
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import type { z } from "zod";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import type { ErrorBody, QueueError } from "../errors";
import {
  CancelSchema,
  CancelScopeSchema,
  CancelKeysSchema,
  ClaimSchema,
  CompleteSchema,
  CompleteManySchema,
  type CompleteManyResult,
  DeadQuerySchema,
  DeadRetryParams,
  EmitSchema,
  EnqueueBatchSchema,
  EnqueueSchema,
  FailSchema,
  HeartbeatSchema,
  JobId,
  ListQuerySchema,
  PoolLimitsSchema,
  PoolNameParams,
  PruneSchema,
  ScopeSchema,
  StatsQuerySchema,
  ClaimOrEnqueueSchema,
  ClaimKeySchema,
  type ClaimOrEnqueueResult,
  ReleaseSchema,
  StepParams,
  ResolveStepSchema,
  AppendStepSchema,
  SleepSchema,
  type StepView,
  TopicParams,
  TypeParams,
  AppendLogsSchema,
  type JobLogs,
  type PauseResult,
  type TypeList,
  type DeadDelivery,
  type EnqueueResult,
  type Job,
  type LeasedJob,
  type ListResult,
  type PoolStatusBody,
  type StatsResult,
  RetryFailedSchema,
  TimelineQuerySchema,
  type Timeline,
  type FailOutcome,
} from "../job/schemas";
import { MetricsQuerySchema, type Metrics } from "../metrics/schemas";
import { ScheduleNameSchema, ScheduleSpecSchema, type Schedule } from "../job/schedule-spec";
import { VERSION } from "../version";
import { wakeSchedules } from "./schedules";
import { errorBody } from "./error-response";
import { QueueOps } from "./operations";
import { parseInput } from "./validate";

export type RpcResult<T> = ({ ok: true } & T) | ({ ok: false } & ErrorBody);

export class EdgeQueue extends WorkerEntrypoint<Env> {
  /**
   * What the Worker running the queue lacks (edgequeue/server's createQueue sets it): every call answers it. An
   * instance property, not a method: every method of the prototype is callable over RPC.
   */
  protected setupProblem?: () => QueueError | null;

  async enqueue(body: z.input<typeof EnqueueSchema>): Promise<RpcResult<EnqueueResult>> {
    return this.run(async (ops) => ops.enqueue(parseInput(EnqueueSchema, body, "body")));
  }

  async enqueueBatch(body: z.input<typeof EnqueueBatchSchema>): Promise<RpcResult<{ results: EnqueueResult[] }>> {
    return this.run(async (ops) => ({ results: await ops.enqueueBatch(parseInput(EnqueueBatchSchema, body, "body").jobs) }));
  }

  async getJob(id: string): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => ({ job: await ops.get(parseInput(JobId, id, "id")) }));
  }

  async listJobs(query: z.input<typeof ListQuerySchema> = {}): Promise<RpcResult<ListResult>> {
    return this.run(async (ops) => ops.list(parseInput(ListQuerySchema, query, "query")));
  }

  async stats(query: z.input<typeof StatsQuerySchema> = {}): Promise<RpcResult<StatsResult>> {
    return this.run(async (ops) => ops.stats(parseInput(StatsQuerySchema, query, "query").type));
  }

  async metrics(query: z.input<typeof MetricsQuerySchema> = {}): Promise<RpcResult<Metrics>> {
    return this.run(async (ops) => ops.metrics(parseInput(MetricsQuerySchema, query, "query")));
  }

  async jobTimeline(id: string, query: z.input<typeof TimelineQuerySchema> = {}): Promise<RpcResult<Timeline>> {
    return this.run(async (ops) => ops.timeline(parseInput(JobId, id, "id"), parseInput(TimelineQuerySchema, query, "query").limit));
  }

  async claimOrEnqueue(body: z.input<typeof ClaimOrEnqueueSchema>): Promise<RpcResult<ClaimOrEnqueueResult>> {
    return this.run(async (ops) => ops.claimOrEnqueue(parseInput(ClaimOrEnqueueSchema, body, "body")));
  }

  async claimKey(body: z.input<typeof ClaimKeySchema>): Promise<RpcResult<{ leased: LeasedJob | null }>> {
    return this.run(async (ops) => ({ leased: await ops.claimKey(parseInput(ClaimKeySchema, body, "body")) }));
  }

  async release(id: string, body: z.input<typeof ReleaseSchema>): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => ({ job: await ops.release(parseInput(JobId, id, "id"), parseInput(ReleaseSchema, body, "body").leaseToken) }));
  }

  async jobSteps(id: string): Promise<RpcResult<{ items: StepView[] }>> {
    return this.run(async (ops) => ({ items: await ops.steps(parseInput(JobId, id, "id")) }));
  }

  /** jobLogs: GET /v1/jobs/{id}/logs — the job's kept ctx.log lines, oldest first. */
  async jobLogs(id: string): Promise<RpcResult<JobLogs>> {
    return this.run(async (ops) => ({ items: await ops.logs(parseInput(JobId, id, "id")) }));
  }

  /** appendLogs: POST /v1/jobs/{id}/logs — a pull worker's lines for its attempt, fenced by its lease. */
  async appendLogs(id: string, body: z.input<typeof AppendLogsSchema>): Promise<RpcResult<{ stored: number }>> {
    return this.run(async (ops) => ({ stored: await ops.appendLogs(parseInput(JobId, id, "id"), parseInput(AppendLogsSchema, body, "body")) }));
  }

  async resolveStep(id: string, name: string, body: z.input<typeof ResolveStepSchema>): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => {
      const p = parseInput(StepParams, { id, name }, "params");
      return { job: await ops.resolveStep(p.id, p.name, parseInput(ResolveStepSchema, body, "body").result) };
    });
  }

  async appendStep(id: string, body: z.input<typeof AppendStepSchema>): Promise<RpcResult<object>> {
    return this.run(async (ops) => {
      await ops.appendStep(parseInput(JobId, id, "id"), parseInput(AppendStepSchema, body, "body"));
      return {};
    });
  }

  async sleepJob(id: string, body: z.input<typeof SleepSchema>): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => ({ job: await ops.sleep(parseInput(JobId, id, "id"), parseInput(SleepSchema, body, "body")) }));
  }

  async retryFailed(body: z.input<typeof RetryFailedSchema> = {}): Promise<RpcResult<{ retried: number; skipped: number; nextCursor: string | null }>> {
    return this.run(async (ops) => ops.retryFailed(parseInput(RetryFailedSchema, body, "body")));
  }

  async cancelJob(id: string, body: z.input<typeof CancelSchema> = {}): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => ({ job: await ops.cancel(parseInput(JobId, id, "id"), parseInput(CancelSchema, body, "body").reason) }));
  }

  async retryJob(id: string): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => ({ job: await ops.retry(parseInput(JobId, id, "id")) }));
  }

  async cancelScope(scope: z.input<typeof ScopeSchema>, body: z.input<typeof CancelScopeSchema> = {}): Promise<RpcResult<{ cancelled: number }>> {
    return this.run(async (ops) => {
      const s = parseInput(ScopeSchema, scope, "scope");
      const b = parseInput(CancelScopeSchema, body, "body");
      return { cancelled: await ops.cancelScope(s, b.pendingOnly ?? false, b.reason) };
    });
  }

  /** cancelKeys: POST /v1/cancel — the live jobs of a type under these dedupe keys. */
  async cancelKeys(body: z.input<typeof CancelKeysSchema>): Promise<RpcResult<{ cancelled: number }>> {
    return this.run(async (ops) => ({ cancelled: await ops.cancelKeys(parseInput(CancelKeysSchema, body, "body")) }));
  }

  /** types: GET /v1/types — every configured or seen type, with pause state and counts. */
  async types(): Promise<RpcResult<TypeList>> {
    return this.run(async (ops) => ops.types());
  }

  /** pauseType: POST /v1/types/{type}/pause — nothing of the type is dispatched or claimed until resumed. */
  async pauseType(type: string): Promise<RpcResult<PauseResult>> {
    return this.run(async (ops) => ops.setPaused(parseInput(TypeParams, { type }, "params").type, true));
  }

  /** resumeType: POST /v1/types/{type}/resume. */
  async resumeType(type: string): Promise<RpcResult<PauseResult>> {
    return this.run(async (ops) => ops.setPaused(parseInput(TypeParams, { type }, "params").type, false));
  }

  async prune(body: z.input<typeof PruneSchema>): Promise<RpcResult<{ deleted: number }>> {
    return this.run(async (ops) => ({ deleted: await ops.prune(parseInput(PruneSchema, body, "body")) }));
  }

  async claim(body: z.input<typeof ClaimSchema>): Promise<RpcResult<{ jobs: LeasedJob[]; completed?: CompleteManyResult["results"] }>> {
    return this.run(async (ops) => ops.claimAfterCompleting(parseInput(ClaimSchema, body, "body")));
  }

  async heartbeat(id: string, body: z.input<typeof HeartbeatSchema>): Promise<RpcResult<{ leaseExpiresAt: number }>> {
    return this.run(async (ops) => {
      const b = parseInput(HeartbeatSchema, body, "body");
      return { leaseExpiresAt: await ops.heartbeat(parseInput(JobId, id, "id"), b.leaseToken, b.leaseMs) };
    });
  }

  async complete(id: string, body: z.input<typeof CompleteSchema>): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => {
      const b = parseInput(CompleteSchema, body, "body");
      return { job: await ops.complete(parseInput(JobId, id, "id"), b.leaseToken, b.result) };
    });
  }

  /** completeMany: several leased jobs completed in one call; each item answered on its own (POST /v1/jobs/complete). */
  async completeMany(body: z.input<typeof CompleteManySchema>): Promise<RpcResult<CompleteManyResult>> {
    return this.run(async (ops) => ({ results: await ops.completeMany(parseInput(CompleteManySchema, body, "body").items) }));
  }

  async fail(id: string, body: z.input<typeof FailSchema>): Promise<RpcResult<{ job: Job; outcome: FailOutcome }>> {
    return this.run(async (ops) => ops.fail(parseInput(JobId, id, "id"), parseInput(FailSchema, body, "body")));
  }

  async emit(topic: string, body: z.input<typeof EmitSchema>): Promise<RpcResult<{ eventId: string; deliveries: string[] }>> {
    return this.run(async (ops) => ops.topics.emit(parseInput(TopicParams.shape.topic, topic, "topic"), parseInput(EmitSchema, body, "body")));
  }

  async listDead(topic: string, query: z.input<typeof DeadQuerySchema> = {}): Promise<RpcResult<{ items: DeadDelivery[]; nextCursor: string | null }>> {
    return this.run(async (ops) => ops.topics.dead(parseInput(TopicParams.shape.topic, topic, "topic"), parseInput(DeadQuerySchema, query, "query")));
  }

  async retryDead(topic: string, consumer: string, eventId: string): Promise<RpcResult<{ job: Job }>> {
    return this.run(async (ops) => {
      const p = parseInput(DeadRetryParams, { topic, consumer, eventId }, "params");
      return { job: await ops.topics.retryDead(p.topic, p.consumer, p.eventId) };
    });
  }

  async putSchedule(name: string, spec: z.input<typeof ScheduleSpecSchema>): Promise<RpcResult<{ schedule: Schedule; created: boolean }>> {
    return this.run(async (ops) => ops.schedules.put(parseInput(ScheduleNameSchema, name, "name"), parseInput(ScheduleSpecSchema, spec, "body")));
  }

  async listSchedules(): Promise<RpcResult<{ items: Schedule[] }>> {
    return this.run(async (ops) => ({ items: await ops.schedules.list() }));
  }

  async getSchedule(name: string): Promise<RpcResult<{ schedule: Schedule }>> {
    return this.run(async (ops) => ({ schedule: await ops.schedules.get(parseInput(ScheduleNameSchema, name, "name")) }));
  }

  async deleteSchedule(name: string): Promise<RpcResult<{ deleted: true }>> {
    return this.run(async (ops) => {
      await ops.schedules.remove(parseInput(ScheduleNameSchema, name, "name"));
      return { deleted: true as const };
    });
  }

  async listPools(): Promise<RpcResult<{ pools: PoolStatusBody[] }>> {
    return this.run(async (ops) => ({ pools: await ops.listPools() }));
  }

  async setPoolLimits(name: string, body: z.input<typeof PoolLimitsSchema>): Promise<RpcResult<PoolStatusBody>> {
    return this.run(async (ops) => ops.setPoolLimits(parseInput(PoolNameParams.shape.name, name, "name"), parseInput(PoolLimitsSchema, body, "body")));
  }

  async health(): Promise<{ ok: true; version: string }> {
    return { ok: true, version: VERSION };
  }

  private async run<T extends object>(fn: (ops: QueueOps) => Promise<T>): Promise<RpcResult<T>> {
    const problem = this.setupProblem?.() ?? null;
    if (problem) return { ok: false, ...problem.toBody() };
    wakeSchedules(this.env, (p) => this.ctx.waitUntil(p));
    try {
      const value = await fn(new QueueOps(this.env, loadConfig(this.env)));
      return { ok: true, ...value };
    } catch (err) {
      return { ok: false, ...errorBody(err).body };
    }
  }
}
