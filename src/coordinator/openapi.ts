/**
 * The OpenAPI 3.1 document served at `GET /v1/openapi.json` (docs/http-api.md,
 * The HTTP API), generated from the operations' declarations (src/api/) and
 * their zod schemas (no hand-written copy). Every request and response body is
 * a named schema under `components.schemas`, referenced by `$ref`, so a
 * generated client can name a `Job`; every operation has its declared
 * operationId; every error status names the codes it can answer. test/node/openapi.test.ts holds it to
 * swagger-parser and to the Redocly linter's recommended rules (redocly.yaml).
 *
 * @module
 */
import { rolesFor } from "../auth/roles";
import { z } from "zod";
import { OPERATION_LIST, type DeclaredOperation } from "../api";
import { ERROR_STATUS, type ErrorCode } from "../errors";
import { ATTEMPTS_MAX, MaxAttemptsSchema } from "../job/max-attempts";
import {
  DeadDeliverySchema,
  EmptyBodySchema,
  EnqueueBatchItemSchema,
  EnqueueResultSchema,
  EnqueueSchema,
  ErrorSchema,
  FailureKindSchema,
  JobResultSchema,
  JobSchema,
  JobStateSchema,
  JsonObjectSchema,
  LeasedJobSchema,
  PoolStatusSchema,
  ScopeSchema,
  StatsResultSchema,
  StatsSchema,
} from "../job/schemas";
import { ScheduleResultSchema, ScheduleSchema } from "../job/schedule-spec";
import { VERSION } from "../version";
import { SUBSCRIPTION_PATH } from "../job/schemas/subscriptions";

type JsonSchema = Record<string, unknown>;

/**
 * Shapes named for what they are, whichever operations use them, so a client names
 * a `Job` (not `GetJobResponse.job`). The rest of the bodies are named after
 * their operation's operationId: `<OperationId>Request` and `<OperationId>Response`.
 */
const NAMED: ReadonlyArray<readonly [z.ZodType, string]> = [
  [JobSchema, "Job"],
  [LeasedJobSchema, "LeasedJob"],
  [JobStateSchema, "JobState"],
  [FailureKindSchema, "FailureKind"],
  [ScopeSchema, "Scope"],
  [JsonObjectSchema, "JsonObject"],
  [ErrorSchema, "Error"],
  [JobResultSchema, "JobResult"],
  [EnqueueSchema, "EnqueueRequest"],
  [EnqueueResultSchema, "EnqueueResult"],
  [EnqueueBatchItemSchema, "EnqueueBatchItem"],
  [StatsSchema, "Stats"],
  [StatsResultSchema, "StatsResult"],
  [ScheduleSchema, "Schedule"],
  [ScheduleResultSchema, "ScheduleResult"],
  [PoolStatusSchema, "PoolStatus"],
  [DeadDeliverySchema, "DeadDelivery"],
  [EmptyBodySchema, "EmptyBody"],
];

/** What each code means, for the descriptions of error responses (docs/http-api.md, The HTTP API: errors). */
const MEANING: Record<ErrorCode, string> = {
  invalid_request: "a path parameter, query parameter or body field is invalid, or the body is not JSON; `details` lists each problem",
  unauthorized: "the bearer token is missing or wrong (or the queue has no QUEUE_TOKEN nor QUEUE_TOKENS)",
  forbidden: "the token's role does not cover this call, or the token is limited to job or scope types the call is not within; the message names the roles that may make it and the token's name, and nothing was done",
  not_found: "no such job, schedule, topic or pool",
  method_not_allowed: "the path does not take this method; `Allow` lists those it does",
  lease_lost: "the lease token is stale or the lease ended; `details.reason` says why",
  already_terminal: "the job has already finished",
  gone: "the wait token expired",
  conflict: "the request conflicts with the current state (a dedupe key under another mode, a config schedule, a job not in a state to retry)",
  request_timeout: "the body stopped arriving (nothing for 10 s) before its Content-Length was reached; nothing was done",
  payload_too_large: "the body, a payload or a result is over its limit",
  queue_full: "the job's type holds maxDepth pending jobs in the object it would join; nothing was written (retry later)",
  too_many_subscribers: "the object holds its most live subscriptions (limits.subscribersPerObject); try again later",
  internal: "an unexpected failure; the request may not have been applied",
  misconfigured: "the Worker running the queue lacks a Durable Object binding, class export or flag it needs; the message says what to add to wrangler.jsonc",
};

/** The codes an operation can answer: its own, and those the app answers for every operation of its kind (coordinator/app.ts). */
function errorCodes(r: DeclaredOperation): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  if (r.auth) codes.add("unauthorized").add("forbidden");
  if (r.params || r.body || r.query) codes.add("invalid_request");
  if (r.body) codes.add("payload_too_large").add("request_timeout");
  for (const c of r.errors) codes.add(c);
  return [...codes];
}

const ref = (name: string) => `#/components/schemas/${name}`;
const pascal = (id: string) => id[0]!.toUpperCase() + id.slice(1);

const conversion = {
  unrepresentable: "any",
  // Payloads and results are checked by a custom zod type (so a `__proto__` key survives); describe them as objects.
  override: (ctx: { zodSchema: unknown; jsonSchema: JsonSchema }) => {
    if ((ctx.zodSchema as { _zod?: { def?: { type?: string } } })._zod?.def?.type === "custom") {
      ctx.jsonSchema.type = "object";
      ctx.jsonSchema.additionalProperties = true;
    }
    // JSON carries no Infinity: over HTTP unlimited attempts are the string "unlimited" (job/max-attempts.ts).
    if (ctx.zodSchema === MaxAttemptsSchema) {
      const description = ctx.jsonSchema.description;
      for (const k of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[k];
      Object.assign(ctx.jsonSchema, { anyOf: [{ type: "integer", minimum: 1, maximum: ATTEMPTS_MAX }, { type: "string", const: "unlimited" }], ...(description ? { description } : {}) });
    }
  },
} as const;

/** One parameter's schema, inline (parameters are not components). */
function inline(s: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(s, { ...conversion, io: "input" }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** Every `$ref` name under a JSON schema. */
function refsIn(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const v of node) refsIn(v, into);
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string" && v.startsWith(ref(""))) into.add(v.slice(ref("").length));
      else refsIn(v, into);
    }
  }
  return into;
}

/** The names reachable from `roots` through `$ref`s in `schemas`. */
function reachable(roots: Iterable<string>, schemas: Record<string, JsonSchema>): Set<string> {
  const seen = new Set<string>();
  const todo = [...roots];
  while (todo.length) {
    const n = todo.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    todo.push(...refsIn(schemas[n], new Set()));
  }
  return seen;
}

/** A copy of `node` with `$ref`s renamed by `rename`. */
function renameRefs(node: unknown, rename: (name: string) => string): unknown {
  if (Array.isArray(node)) return node.map((v) => renameRefs(v, rename));
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === "$ref" && typeof v === "string" && v.startsWith(ref("")) ? ref(rename(v.slice(ref("").length))) : renameRefs(v, rename)]),
  );
}

/**
 * The named schemas, converted twice: request bodies as zod reads them (io
 * "input": defaults optional), response bodies as it writes them (io
 * "output"). A shape reached both ways whose two forms differ keeps its name
 * for the response and is `<Name>Input` for requests; only shapes some
 * operation reaches are kept (an unused component is a lint warning).
 */
function components(named: Map<z.ZodType, string>, requestRoots: Set<string>, responseRoots: Set<string>) {
  const registry = z.registry<{ id: string }>();
  for (const [s, id] of named) registry.add(s, { id });
  const convert = (io: "input" | "output") => {
    const { schemas } = z.toJSONSchema(registry, { ...conversion, io, uri: ref }) as { schemas: Record<string, JsonSchema> };
    for (const s of Object.values(schemas)) {
      delete s.$schema;
      delete s.$id;
    }
    return schemas;
  };
  const input = convert("input");
  const output = convert("output");
  const asInput = reachable(requestRoots, input);
  const asOutput = reachable(responseRoots, output);
  const split = new Set([...asInput].filter((n) => asOutput.has(n) && JSON.stringify(input[n]) !== JSON.stringify(output[n])));
  const inputName = (n: string) => (split.has(n) ? `${n}Input` : n);
  const schemas: Record<string, unknown> = {};
  for (const n of asOutput) schemas[n] = output[n];
  for (const n of asInput) schemas[inputName(n)] = renameRefs(input[n], inputName);
  return { schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))), inputName };
}

function errorResponse(status: string, codes: ErrorCode[]): unknown {
  return {
    description: codes.map((c) => `- \`${c}\`: ${MEANING[c]}`).join("\n"),
    content: {
      "application/json": {
        // The shared shape, narrowed to the codes this operation answers with this status.
        schema: {
          allOf: [{ $ref: ref("Error") }, { type: "object", properties: { error: { type: "object", properties: { code: { enum: codes } } } } }],
        },
      },
    },
    ...(status === "401" ? { headers: { "WWW-Authenticate": { description: "`Bearer realm=\"edgequeue\"`", schema: { type: "string" } } } } : {}),
  };
}

/** The success statuses of an operation and their body schema (api/operation.ts, `status`). */
function successes(r: DeclaredOperation): [string, z.ZodType][] {
  if (r.status === "created") return [["200", r.response], ["201", r.response]];
  return [[String(r.status ?? 200), r.response]];
}

/**
 * openSubscriptionDoc: `GET /v1/subscriptions/{token}` — no JSON call (a WebSocket upgrade or an event stream), so
 * no declaration; served by coordinator/subscriptions.ts and described here by hand.
 */
function openSubscriptionDoc(): JsonSchema {
  const message = {
    type: "object",
    required: ["event"],
    properties: { event: { type: "string", enum: ["state", "progress", "step", "log", "result"] } },
    description:
      "One message: state `{event, job}` (or, first, `{event, jobs, more}` for a key or scope), progress `{event, id, progress, at}`, step `{event, id, step}`, log `{event, id, line}`, result `{event, id, result}` (docs/http-api.md \"Live subscriptions\").",
  };
  return {
    operationId: "openSubscription",
    summary: "Follow what a subscription URL names, live: a WebSocket upgrade, or a GET that accepts text/event-stream. No bearer token: the signed URL is the credential",
    security: [],
    parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" }, description: "The signed token POST /v1/subscriptions answered in `path`." }],
    responses: {
      "101": { description: "Switching to a WebSocket: one JSON message per text frame; a single job's socket closes (1000) once the job ended." },
      "200": { description: "Server-Sent Events: each `data:` line is one JSON message; a single job's stream ends once the job ended.", content: { "text/event-stream": { schema: message } } },
      "400": errorResponse("400", ["invalid_request"]),
      "401": errorResponse("401", ["unauthorized"]),
      "404": errorResponse("404", ["not_found"]),
      "429": errorResponse("429", ["too_many_subscribers"]),
    },
  };
}

let served: JsonSchema | undefined;
/** servedDocument: the document of every declared operation, built once per isolate. */
export const servedDocument = (): JsonSchema => (served ??= openApiDocument(OPERATION_LIST));

export function openApiDocument(all: readonly DeclaredOperation[]): JsonSchema {
  const ids = new Set<string>();
  for (const r of all) {
    if (ids.has(r.operationId)) throw new Error(`operationId ${r.operationId} is used twice`);
    ids.add(r.operationId);
  }

  // Name every body: the shared shapes by NAMED, the rest after their operation.
  const named = new Map(NAMED);
  const nameOf = (s: z.ZodType, fallback: string) => {
    if (!named.has(s)) named.set(s, fallback);
    return named.get(s)!;
  };
  const requestRoots = new Set<string>();
  const responseRoots = new Set<string>(["Error"]);
  const bodyNames = new Map<DeclaredOperation, { request?: string; responses: Record<string, string> }>();
  for (const r of all) {
    const request = r.body ? nameOf(r.body, `${pascal(r.operationId)}Request`) : undefined;
    if (request) requestRoots.add(request);
    const entries = successes(r);
    const distinct = new Set(entries.map(([, s]) => s)).size;
    const responses = Object.fromEntries(
      entries.map(([status, s]) => [status, nameOf(s, distinct > 1 ? `${pascal(r.operationId)}${status}Response` : `${pascal(r.operationId)}Response`)]),
    );
    for (const n of Object.values(responses)) responseRoots.add(n);
    bodyNames.set(r, { request, responses });
  }
  const { schemas, inputName } = components(named, requestRoots, responseRoots);

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of all) {
    const names = bodyNames.get(r)!;
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: r.params?.shape[m[1]!] ? inline(r.params.shape[m[1]!] as z.ZodType) : { type: "string" },
    }));
    const query = r.query
      ? Object.entries(r.query.shape).map(([name, s]) => ({
          name,
          in: "query",
          required: !(s as z.ZodType).safeParse(undefined).success,
          schema: inline(s as z.ZodType),
        }))
      : [];
    const responses: Record<string, unknown> = {};
    for (const [status, name] of Object.entries(names.responses)) {
      const description = status === "201" ? "Created" : status === "202" ? "Accepted" : "OK";
      const content: Record<string, unknown> = { "application/json": { schema: { $ref: ref(name) } } };
      if (status === "200" && r.alsoAs) content[r.alsoAs.contentType] = { schema: { type: "string", description: r.alsoAs.description } };
      responses[status] = { description, content };
    }
    const byStatus = new Map<string, ErrorCode[]>();
    for (const code of errorCodes(r)) {
      const status = String(ERROR_STATUS[code]);
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a.localeCompare(b))) responses[status] = errorResponse(status, codes);
    paths[r.path] ??= {};
    paths[r.path]![r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      // The roles whose tokens may make the call (auth/roles.ts; docs/operating.md "Tokens and roles").
      ...(r.auth ? { description: `Roles: ${rolesFor(r.access!).join(", ")}.`, "x-edgequeue-roles": rolesFor(r.access!) } : { security: [] }),
      ...(params.length || query.length ? { parameters: [...params, ...query] } : {}),
      ...(names.request
        ? {
            requestBody: {
              // An empty body reads as `{}` (coordinator/body.ts), so a body whose fields are all optional may be left out.
              required: !r.body!.safeParse({}).success,
              content: { "application/json": { schema: { $ref: ref(inputName(names.request)) } } },
            },
          }
        : {}),
      responses,
    };
  }
  paths[`${SUBSCRIPTION_PATH}/{token}`] = { get: openSubscriptionDoc() };
  return {
    openapi: "3.1.0",
    info: {
      title: "edgequeue",
      version: VERSION,
      description: "A durable job queue on Cloudflare Durable Objects.",
      // The project's license (LICENSE, package.json).
      license: { name: "MIT", identifier: "MIT" },
    },
    // Relative: resolved against wherever this document is served from (the deployed Worker, or `npm start` on 127.0.0.1:8787).
    servers: [{ url: "/", description: "The Worker serving this document" }],
    components: { schemas, securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A token of QUEUE_TOKENS (its role says which operations it may call: each operation's `x-edgequeue-roles`), or the QUEUE_TOKEN secret (an admin)." } } },
    security: [{ bearer: [] }],
    paths,
  };
}
