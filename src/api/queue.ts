/**
 * The queue as a whole: counts and metrics, the busiest objects, the types and pausing one, health,
 * and this API's own OpenAPI document (docs/http-api.md, docs/operating.md). The rule and fields of a
 * declaration: api/operation.ts.
 *
 * @module
 */
import { z } from "zod";
import { EmptyBodySchema, HealthSchema } from "../job/schemas/pieces";
import { PauseResultSchema, ScopesQuerySchema, ScopesResultSchema, StatsQuerySchema, StatsResultSchema, TypeListSchema, TypeParams } from "../job/schemas/stats";
import { PROMETHEUS_CONTENT_TYPE } from "../metrics/prometheus";
import { MetricsQuerySchema, MetricsSchema } from "../metrics/schemas";
import { operation } from "./operation";

export const QUEUE_OPERATIONS = {
  stats: operation({
    access: "read",
    method: "get",
    path: "/v1/stats",
    summary: "Counts by state, the oldest pending lag, and the types nothing will run, across all objects",
    query: StatsQuerySchema,
    response: StatsResultSchema,
    errors: [],
  }),
  metrics: operation({
    access: "read",
    method: "get",
    path: "/v1/metrics",
    summary: "Per-type counts, lag, totals and per-minute counters; Prometheus text with `Accept: text/plain`",
    query: MetricsQuerySchema,
    response: MetricsSchema,
    alsoAs: {
      contentType: PROMETHEUS_CONTENT_TYPE,
      description: "Prometheus text exposition format 0.0.4: counters (`edgequeue_jobs_<counter>_total`), per-state gauges, failed by kind, oldest pending lag.",
    },
    errors: [],
  }),
  listScopes: operation({
    access: "read",
    method: "get",
    path: "/v1/scopes",
    summary: "The busiest objects (scopes and unscoped type shards) by live jobs, most first",
    query: ScopesQuerySchema,
    response: ScopesResultSchema,
    errors: [],
  }),
  types: operation({
    access: "read",
    method: "get",
    path: "/v1/types",
    summary: "Every configured type and any other the queue has seen, with whether it is paused or pushed and its counts",
    response: TypeListSchema,
    errors: [],
  }),
  pauseType: operation({
    access: "operate",
    method: "post",
    path: "/v1/types/{type}/pause",
    summary: "Pause a type queue-wide: enqueues still land, nothing of it is dispatched or claimed, running jobs finish; survives restarts",
    params: TypeParams,
    body: EmptyBodySchema,
    response: PauseResultSchema,
    errors: ["not_found"],
  }),
  resumeType: operation({
    access: "operate",
    method: "post",
    path: "/v1/types/{type}/resume",
    summary: "Resume a paused type: its due jobs are dispatched and claimed again",
    params: TypeParams,
    body: EmptyBodySchema,
    response: PauseResultSchema,
    errors: ["not_found"],
  }),
  health: operation({
    method: "get",
    path: "/v1/health",
    summary: "Liveness (no auth)",
    response: HealthSchema,
    errors: [],
    auth: false,
  }),
  getOpenApiDocument: operation({
    access: "any",
    method: "get",
    path: "/v1/openapi.json",
    // It answers 401 without the token like the rest of /v1 (docs/http-api.md, The HTTP API).
    summary: "This document: OpenAPI 3.1, generated from the operations' declarations",
    response: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }).meta({ description: "An OpenAPI 3.1 document." }),
    errors: [],
  }),
};
