/**
 * A job's journal: its durable steps and sleeps, and its kept `ctx.log` lines — read by anyone,
 * written by a pull worker under its lease (docs/handlers.md "Durable steps"). The rule and fields of
 * a declaration: api/operation.ts.
 *
 * @module
 */
import { z } from "zod";
import { JobResultSchema } from "../job/schemas/job";
import { ReportProgressSchema, AppendLogsSchema, AppendStepResultSchema, AppendStepSchema, JobLogsSchema, ResolveStepSchema, SleepSchema, StepListSchema, StepParams } from "../job/schemas/journal";
import { JobIdParams } from "../job/schemas/pieces";
import { operation } from "./operation";

export const JOURNAL_OPERATIONS = {
  jobSteps: operation({
    access: "read",
    method: "get",
    path: "/v1/jobs/{id}/steps",
    summary: "A job's journal of durable steps and sleeps, in call order",
    params: JobIdParams,
    response: StepListSchema,
    errors: ["not_found"],
  }),
  jobLogs: operation({
    access: "read",
    method: "get",
    path: "/v1/jobs/{id}/logs",
    summary: "A job's kept ctx.log lines (the newest 100, each at most 2 KiB), oldest first",
    params: JobIdParams,
    response: JobLogsSchema,
    errors: ["not_found"],
  }),
  appendLogs: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/logs",
    summary: "A pull worker keeps its attempt's ctx.log lines with the job, fenced by its lease (edgequeue/worker sends them before it settles)",
    params: JobIdParams,
    body: AppendLogsSchema,
    response: z.object({ stored: z.number().int() }),
    errors: ["not_found", "lease_lost", "already_terminal"],
  }),
  reportProgress: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/progress",
    summary: "A pull worker reports its attempt's progress (a number from 0 to 100 or a JSON object of at most 4 KiB), kept on the job and told to its watchers, fenced by its lease",
    params: JobIdParams,
    body: ReportProgressSchema,
    response: z.object({ progressAt: z.number().meta({ description: "When the queue kept it (its clock)." }) }),
    errors: ["not_found", "lease_lost", "already_terminal"],
  }),
  resolveStep: operation({
    access: "operate",
    method: "post",
    path: "/v1/jobs/{id}/steps/{name}/resolve",
    summary: "Journal what an unfinished atMostOnce step did; a failed or cancelled job goes back to pending",
    params: StepParams,
    body: ResolveStepSchema,
    response: JobResultSchema,
    errors: ["not_found", "conflict", "already_terminal"],
    // The clients take the step's result itself (null is a result) and answer the job.
    client: (call) => async (id: string, name: string, result: unknown) => (await call(id, name, { result })).job,
  }),
  appendStep: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/steps",
    summary: "A pull worker journals a durable step (begin an atMostOnce step, or commit a result), fenced by its lease",
    params: JobIdParams,
    body: AppendStepSchema,
    response: AppendStepResultSchema,
    errors: ["not_found", "lease_lost", "already_terminal", "conflict"],
  }),
  sleepJob: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/sleep",
    summary: "A pull worker's durable sleep: journal it and put the job back to pending until `until`, without spending the attempt",
    params: JobIdParams,
    body: SleepSchema,
    response: JobResultSchema,
    errors: ["not_found", "lease_lost", "already_terminal", "conflict"],
  }),
};
