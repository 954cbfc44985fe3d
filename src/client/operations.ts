/**
 * Every operation of the HTTP API by its OpenAPI operationId, with its method
 * and path: what the HTTP client calls, so it covers the whole API and not a
 * subset (a test holds this table equal to the routes the coordinator serves,
 * coordinator/routes.ts; the API is documented at /v1/openapi.json).
 *
 * @module
 */

export const OPERATIONS = {
  enqueue: ["POST", "/v1/jobs"],
  enqueueBatch: ["POST", "/v1/jobs/batch"],
  completeMany: ["POST", "/v1/jobs/complete"],
  claimOrEnqueue: ["POST", "/v1/jobs/claim-or-enqueue"],
  claimKey: ["POST", "/v1/jobs/claim-key"],
  listJobs: ["GET", "/v1/jobs"],
  getJob: ["GET", "/v1/jobs/{id}"],
  jobTimeline: ["GET", "/v1/jobs/{id}/timeline"],
  jobSteps: ["GET", "/v1/jobs/{id}/steps"],
  jobLogs: ["GET", "/v1/jobs/{id}/logs"],
  appendLogs: ["POST", "/v1/jobs/{id}/logs"],
  resolveStep: ["POST", "/v1/jobs/{id}/steps/{name}/resolve"],
  appendStep: ["POST", "/v1/jobs/{id}/steps"],
  sleepJob: ["POST", "/v1/jobs/{id}/sleep"],
  metrics: ["GET", "/v1/metrics"],
  listScopes: ["GET", "/v1/scopes"],
  stats: ["GET", "/v1/stats"],
  cancelJob: ["POST", "/v1/jobs/{id}/cancel"],
  retryJob: ["POST", "/v1/jobs/{id}/retry"],
  retryFailed: ["POST", "/v1/retry"],
  cancelScope: ["POST", "/v1/scopes/{scopeType}/{scopeId}/cancel"],
  cancelKeys: ["POST", "/v1/cancel"],
  types: ["GET", "/v1/types"],
  pauseType: ["POST", "/v1/types/{type}/pause"],
  resumeType: ["POST", "/v1/types/{type}/resume"],
  prune: ["POST", "/v1/prune"],
  claim: ["POST", "/v1/claim"],
  heartbeat: ["POST", "/v1/jobs/{id}/heartbeat"],
  complete: ["POST", "/v1/jobs/{id}/complete"],
  release: ["POST", "/v1/jobs/{id}/release"],
  fail: ["POST", "/v1/jobs/{id}/fail"],
  emit: ["POST", "/v1/topics/{topic}/events"],
  listDead: ["GET", "/v1/topics/{topic}/dead"],
  retryDead: ["POST", "/v1/topics/{topic}/dead/{consumer}/{eventId}/retry"],
  putSchedule: ["PUT", "/v1/schedules/{name}"],
  listSchedules: ["GET", "/v1/schedules"],
  getSchedule: ["GET", "/v1/schedules/{name}"],
  deleteSchedule: ["DELETE", "/v1/schedules/{name}"],
  listPools: ["GET", "/v1/pools"],
  setPoolLimits: ["PUT", "/v1/pools/{name}"],
  health: ["GET", "/v1/health"],
} as const satisfies Record<string, readonly ["GET" | "POST" | "PUT" | "DELETE", string]>;

export type OperationId = keyof typeof OPERATIONS;

/** What one call takes: the path's parameters, the query and the JSON body. */
export interface OperationInput {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
}

/** operationUrl: the path with its parameters filled in (each encoded) and the query appended; a missing parameter throws. */
export function operationUrl(op: OperationId, input: OperationInput = {}): string {
  const [, template] = OPERATIONS[op];
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = input.params?.[name];
    if (v === undefined) throw new TypeError(`${op}: the path parameter ${name} is missing`);
    return encodeURIComponent(v);
  });
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(input.query ?? {})) {
    if (v === undefined) continue;
    // The API takes a list as comma-separated text.
    params.set(k, Array.isArray(v) ? v.join(",") : String(v));
  }
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}
