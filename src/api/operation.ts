/**
 * What one operation of the API is, declared once (docs/design.md "Operations, declared once"): its
 * method and path, the zod schemas of its input and answer, the errors it can answer, whether it needs
 * the token. The Hono routes, the EdgeQueue RPC entrypoint, `GET /v1/openapi.json` and both clients
 * are derived from these declarations; only the implementation (coordinator/implementations.ts) is
 * written beside them. Nothing here imports Hono or a Durable Object: the clients, which run in Node
 * and browsers, import it.
 *
 * An operation's RPC method (named by its operationId) takes the path's parameters in path order, then
 * its body — or its query — when it has one: `resolveStep(id, name, body)`, `listJobs(query?)`. A body
 * with no fields is no argument (`retryJob(id)`); an input whose fields are all optional may be left
 * out. `rpc` declares another argument list where that reads better (`cancelScope(scope, body?)`).
 *
 * @module
 */
import type { z } from "zod";
import type { ErrorCode } from "../errors";
import type { Access } from "../auth/roles";

export type HttpMethod = "get" | "post" | "put" | "delete";
export type SuccessStatus = 200 | 201 | 202;

/** One call's input as HTTP carries it: the path's parameters, the query, the JSON body (unparsed). */
export interface OperationInput {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

/** The names in a path template, in order: `/v1/jobs/{id}/steps/{name}` → `["id", "name"]`. */
export type PathParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? [N, ...PathParamNames<Rest>] : [];

/**
 * A query's fields as a caller gives them: a field zod coerces from the query string (`limit`) takes
 * what it becomes (a number), not `unknown`.
 */
export type QueryInput<Q extends z.ZodType> = {
  [K in keyof z.input<Q>]: unknown extends z.input<Q>[K] ? (K extends keyof z.output<Q> ? z.output<Q>[K] : unknown) : z.input<Q>[K];
};

/** A body schema without fields (`EmptyBodySchema`): the call sends `{}`, and its RPC method takes no argument for it. */
type NoFields<B> = B extends z.ZodObject<infer Shape> ? ([keyof Shape] extends [never] ? true : false) : false;

type InputArg<T> = {} extends T ? [input?: T] : [input: T];
type StringArgs<N extends readonly string[]> = { [K in keyof N]: string };

/** The RPC arguments the rule above gives: path parameters, then the body or the query. */
export type DefaultArgs<Path extends string, B, Q> = [
  ...StringArgs<PathParamNames<Path>>,
  ...(B extends z.ZodType ? (NoFields<B> extends true ? [] : InputArg<z.input<B>>) : Q extends z.ZodType ? InputArg<QueryInput<Q>> : []),
];

/** An RPC argument list of its own: the HTTP input it stands for, and what the path's parameters are called in it. */
export interface RpcArguments<A extends unknown[]> {
  input: (...args: A) => OperationInput;
  /** A path parameter's name in the arguments, for the paths a refusal names (`cancelScope`'s scopeId is its scope's `id`). */
  names?: Record<string, string>;
}

/**
 * Operation: one declaration. `A` is its RPC argument list, `M` the client method `client` shapes
 * from the plain call (when the clients offer it otherwise than as the RPC method: `getSchedule(name)`
 * answers the schedule itself).
 */
export interface Operation<
  Path extends string = string,
  R extends z.ZodType = z.ZodType,
  P extends z.ZodObject | undefined = z.ZodObject | undefined,
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  A extends unknown[] = any[],
  M = unknown,
> {
  method: HttpMethod;
  /** OpenAPI form: `/v1/jobs/{id}`. */
  path: Path;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /** The answer: the JSON body over HTTP, and over RPC the same fields tagged `ok: true`. */
  response: R;
  /** `created`: 201 when the answer's `created` is true, else 200; 202: accepted. Otherwise 200. */
  status?: "created" | 202;
  /**
   * The refusals of the operation itself. Those the app answers for every operation of a kind are added
   * where the document is built (coordinator/openapi.ts, `errorCodes`): `unauthorized` when `auth`,
   * `invalid_request` when it takes params, a body or a query, `payload_too_large` when it takes a body.
   */
  errors: readonly ErrorCode[];
  /** Another media type the 200 answer comes in, when the request's Accept asks for it (metrics: Prometheus text). */
  alsoAs?: { contentType: string; description: string };
  /** false: no token needed (health). */
  auth: boolean;
  /**
   * The kind of call it is, which a token's role must grant (auth/roles.ts; docs/operating.md "Tokens and roles").
   * Every operation that needs a token says it (api/index.ts checks).
   */
  access?: Access;
  /** The RPC arguments, when not the default rule's. */
  rpc?: RpcArguments<A>;
  /** The clients' method, when not the plain call. */
  client?: (call: (...args: A) => Promise<z.output<R>>) => M;
}

/** operation: a declaration, its types kept exact (the RPC arguments and the client method are inferred from it). */
export function operation<
  const Path extends string,
  R extends z.ZodType,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  A extends unknown[] = DefaultArgs<Path, B, Q>,
  M = undefined,
>(spec: {
  method: HttpMethod;
  path: Path;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  status?: "created" | 202;
  errors: readonly ErrorCode[];
  alsoAs?: { contentType: string; description: string };
  auth?: boolean;
  access?: Access;
  rpc?: RpcArguments<A>;
  client?: (call: (...args: A) => Promise<z.output<R>>) => M;
}): Operation<Path, R, P, Q, B, A, M> {
  return { auth: true, ...spec };
}

// ---------------------------------------------------------------- what a declaration gives

/** The RPC (and plain client) arguments of an operation. */
export type ArgsOf<O> = O extends Operation<any, any, any, any, any, infer A, any> ? A : never;
/** What an operation answers (the parsed response). */
export type AnswerOf<O> = O extends Operation<any, infer R, any, any, any, any, any> ? z.output<R> : never;
/** The clients' method for an operation: the one `client` shapes, else the plain call. */
export type ClientMethodOf<O> =
  O extends Operation<any, any, any, any, any, infer A, infer M> ? ([M] extends [undefined] ? (...args: A) => Promise<AnswerOf<O>> : M) : never;

/** An operation's input once its schemas have parsed it: what its implementation receives. */
export type ParsedInputOf<O> =
  O extends Operation<any, any, infer P, infer Q, infer B, any, any>
    ? {
        params: P extends z.ZodObject ? z.output<P> : Record<string, string>;
        query: Q extends z.ZodObject ? z.output<Q> : undefined;
        body: B extends z.ZodType ? z.output<B> : undefined;
      }
    : never;
