/**
 * The jobs: enqueue one or a batch, read, list, a job's timeline, cancel and retry one
 * (docs/http-api.md, The HTTP API). The rule and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import { CancelSchema, RerunSchema } from "../job/schemas/changes";
import { EnqueueBatchResultSchema, EnqueueBatchSchema, EnqueueResultSchema, EnqueueSchema } from "../job/schemas/enqueue";
import { ChildrenQuerySchema, ChildrenSchema, JobResultSchema, TimelineQuerySchema, TimelineSchema } from "../job/schemas/job";
import { ListQuerySchema, ListResultSchema } from "../job/schemas/listing";
import { EmptyBodySchema, JobIdParams, JobWhereQuerySchema } from "../job/schemas/pieces";
import type { z } from "zod";
import { operation } from "./operation";

export const JOB_OPERATIONS = {
  enqueue: operation({
    access: "produce",
    method: "post",
    path: "/v1/jobs",
    summary: "Enqueue a job (idempotent by id, deduplicated by dedupeKey)",
    body: EnqueueSchema,
    response: EnqueueResultSchema,
    status: "created",
    errors: ["conflict", "queue_full"],
  }),
  enqueueBatch: operation({
    access: "produce",
    method: "post",
    path: "/v1/jobs/batch",
    summary: "Enqueue 1 to 1,000 jobs; one invalid item refuses the whole call",
    body: EnqueueBatchSchema,
    response: EnqueueBatchResultSchema,
    errors: ["conflict", "queue_full"],
  }),
  listJobs: operation({
    access: "read",
    method: "get",
    path: "/v1/jobs",
    summary: "List jobs, filtered and paged",
    query: ListQuerySchema,
    response: ListResultSchema,
    errors: [],
  }),
  getJob: operation({
    access: "track",
    method: "get",
    path: "/v1/jobs/{id}",
    summary: "Get one job: by its id, or by the id a caller gave at enqueue with its type or scope",
    params: JobIdParams,
    query: JobWhereQuerySchema,
    response: JobResultSchema,
    errors: ["not_found"],
  }),
  jobTimeline: operation({
    access: "read",
    method: "get",
    path: "/v1/jobs/{id}/timeline",
    summary: "A job's newest transitions, oldest first (state, attempt, time, error or reason)",
    params: JobIdParams,
    query: TimelineQuerySchema,
    response: TimelineSchema,
    errors: ["not_found"],
  }),
  listChildren: operation({
    access: "read",
    method: "get",
    path: "/v1/jobs/{id}/children",
    summary: "The children a job invoked (ctx.invoke), in call order, with their states",
    params: JobIdParams,
    query: ChildrenQuerySchema,
    response: ChildrenSchema,
    errors: ["not_found"],
  }),
  cancelJob: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/{id}/cancel",
    summary: "Cancel a pending, running or waiting job (a running job's lease is revoked; its children are cancelled unless cascade is false)",
    params: JobIdParams,
    body: CancelSchema,
    response: JobResultSchema,
    errors: ["not_found", "already_terminal"],
  }),
  retryJob: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/{id}/retry",
    summary: "Send a failed or cancelled job back to pending, due now, attempts 0",
    params: JobIdParams,
    body: EmptyBodySchema,
    response: JobResultSchema,
    errors: ["not_found", "conflict"],
    client: (call) => async (id: string) => (await call(id)).job,
  }),
  pauseJob: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/{id}/pause",
    summary:
      "Pause one job: a pending one waits, paused, at once; a running one pauses at its next step or where its attempt would go back to pending; a waiting one stays paused when its waits end (waitingFor shows the pause; docs/http-api.md \"Pause and resume one job\")",
    params: JobIdParams,
    body: EmptyBodySchema,
    response: JobResultSchema,
    errors: ["not_found", "already_terminal"],
    client: (call) => async (id: string) => (await call(id)).job,
  }),
  resumeJob: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/{id}/resume",
    summary: "Resume a paused job: pending again at the time it was due (a pause asked of a running job is withdrawn; a waiting job goes on waiting for its other waits)",
    params: JobIdParams,
    body: EmptyBodySchema,
    response: JobResultSchema,
    errors: ["not_found", "conflict"],
    client: (call) => async (id: string) => (await call(id)).job,
  }),
  rerunJob: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/{id}/rerun",
    summary: "A new job made from a finished one (same type, scope and options; its payload or a new one), linked both ways, from a step of its journal (the steps before it keep their results and do not run again) or from the start",
    params: JobIdParams,
    body: RerunSchema,
    response: JobResultSchema,
    errors: ["not_found", "conflict"],
    client: (call) => async (id: string, body?: z.input<typeof RerunSchema>) => (await call(id, body)).job,
  }),
};
